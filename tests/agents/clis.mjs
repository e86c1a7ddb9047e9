// The six coding-agent CLIs as tests/agents/run.mjs drives them offline against the fake model
// (the research notes behind each line are in tests/agents/README.md): how each is installed
// (install.sh's name), the files it needs besides the hook configuration (user settings, the
// model provider), its command line and environment, and the scripted turns of one session
// that edits src/app.txt (held, released while the hook waits), then src/held.txt (held
// throughout: the wait runs out and the edit is denied), then runs `sed -i` on src/held.txt,
// then a command during which the filesystem gate refuses a write (GATE).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TASK = 'Change world to EDITED in src/app.txt and src/held.txt';
const SED = 'sed -i s/world/SHELLED/ src/held.txt';
// Stands in for the filesystem gate (`leasehold run`) refusing a write while the command runs:
// the script run.mjs puts in the project appends the gate's refusal line to the run's log, as
// the gate does. (A command line with $(...) in quotes is one Claude Code refuses to run.)
export const GATE = 'sh tools/refuse-write.sh';
export const GATE_SCRIPT = `#!/bin/sh
printf '{"at":%s,"op":"write","path":"src/held.txt","resource":"fs:src/held.txt","reason":"lease_held","holder":"did:agent:holder","heldResource":"fs:src/held.txt","pid":4242,"command":"prettier"}\\n' "$(date +%s%3N)" >> "$LEASEHOLD_RUN/refusals.jsonl"
`;

function write(file, text) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof text === 'string' ? text : JSON.stringify(text, null, 2));
}

const patch = (file) => `*** Begin Patch\n*** Update File: ${file}\n@@\n hello\n-world\n+EDITED\n*** End Patch\n`;

// Each agent (keyed by its `leasehold hook` name): `install` (install.sh's name), `config` (the
// file install-hooks writes, below the project), `setup(ctx)` (files the run needs),
// `command(ctx)` -> { args, env, node22 }, `turns(ctx)` -> the script. ctx: { proj, home, port,
// cache }.
// In each script the held edit is turn `heldTurn`, the sed turn `sedTurn`, the gate's turn
// the one after it.
export const CLIS = {
  'claude-code': {
    install: 'claude',
    config: '.claude/settings.json',
    command: (c) => ({
      args: ['-p', TASK, '--model', 'claude-sonnet-4-5', '--permission-mode', 'acceptEdits',
             '--output-format', 'stream-json', '--verbose',
             // acceptEdits lets sed through to the hook; a script needs its own permission.
             '--allowedTools', `Bash(${GATE})`],
      env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${c.port}`, ANTHROPIC_API_KEY: 'sk-ant-fake',
             CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1',
             DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1',
             CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1' },
    }),
    // Edit refuses a file that was not Read first.
    turns: (c) => [
      { tool: 'Read', args: { file_path: `${c.proj}/src/app.txt` } },
      { tool: 'Edit', args: { file_path: `${c.proj}/src/app.txt`, old_string: 'world', new_string: 'EDITED' } },
      { tool: 'Read', args: { file_path: `${c.proj}/src/held.txt` } },
      { tool: 'Edit', args: { file_path: `${c.proj}/src/held.txt`, old_string: 'world', new_string: 'EDITED' } },
      { tool: 'Bash', args: { command: SED, description: 'edit with sed' } },
      { tool: 'Bash', args: { command: GATE, description: 'format' } },
      { text: 'finished' },
    ],
    heldTurn: 3,
    sedTurn: 4,
  },

  codex: {
    install: 'codex',
    config: '.codex/hooks.json',
    setup: (c) => write(join(c.home, '.codex/config.toml'), `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:${c.port}/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 120000

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
log_user_prompt = false

[projects."${c.proj}"]
trust_level = "trusted"
`),
    command: (c) => ({
      args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', TASK],
      env: { CODEX_HOME: join(c.home, '.codex'), FAKE_API_KEY: 'sk-fake' },
    }),
    // gpt-5.5 gets apply_patch (a freeform tool: the patch text) and exec_command.
    turns: () => [
      { tool: 'apply_patch', args: patch('src/app.txt') },
      { tool: 'apply_patch', args: patch('src/held.txt') },
      { tool: 'exec_command', args: { cmd: SED } },
      { tool: 'exec_command', args: { cmd: GATE } },
      { text: 'finished' },
    ],
    heldTurn: 1,
    sedTurn: 2,
  },

  gemini: {
    install: 'gemini',
    config: '.gemini/settings.json',
    setup: (c) => write(join(c.home, '.gemini/settings.json'), {
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    }),
    command: (c) => ({
      args: ['-p', TASK, '-m', 'gemini-2.5-flash', '--yolo', '--output-format', 'stream-json'],
      env: { GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${c.port}`, GEMINI_API_KEY: 'fake-key',
             GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    }),
    turns: (c) => [
      { tool: 'replace', args: { file_path: `${c.proj}/src/app.txt`, old_string: 'world', new_string: 'EDITED', instruction: 'change world' } },
      { tool: 'replace', args: { file_path: `${c.proj}/src/held.txt`, old_string: 'world', new_string: 'EDITED', instruction: 'change world' } },
      { tool: 'run_shell_command', args: { command: SED, description: 'edit with sed' } },
      { tool: 'run_shell_command', args: { command: GATE, description: 'format' } },
      { text: 'finished' },
    ],
    heldTurn: 1,
    sedTurn: 2,
  },

  copilot: {
    install: 'copilot',
    config: '.github/hooks/leasehold.json',
    command: (c) => ({
      args: ['-p', TASK, '--trust-folder', '--allow-all-tools', '--no-auto-update',
             '--disable-client-telemetry', '--output-format', 'json'],
      // It unpacks itself on a first run (235 MB): kept in the agents' cache, outside the clone.
      env: { COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${c.port}/v1`,
             COPILOT_PROVIDER_API_KEY: 'sk-fake', COPILOT_MODEL: 'gpt-4.1',
             COPILOT_AUTO_UPDATE: 'false', COPILOT_CACHE_HOME: join(c.cache, 'copilot-unpacked') },
    }),
    turns: (c) => [
      { tool: 'edit', args: { path: `${c.proj}/src/app.txt`, old_str: 'world', new_str: 'EDITED' } },
      { tool: 'edit', args: { path: `${c.proj}/src/held.txt`, old_str: 'world', new_str: 'EDITED' } },
      { tool: 'bash', args: { command: SED, description: 'edit with sed' } },
      { tool: 'bash', args: { command: GATE, description: 'format' } },
      { text: 'finished' },
    ],
    heldTurn: 1,
    sedTurn: 2,
  },

  qwen: {
    install: 'qwen',
    config: '.qwen/settings.json',
    setup: (c) => write(join(c.home, '.qwen/settings.json'), {
      security: { auth: { selectedType: 'openai' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true },
    }),
    command: (c) => ({
      args: ['-p', TASK, '--yolo', '--output-format', 'stream-json'],
      env: { OPENAI_BASE_URL: `http://127.0.0.1:${c.port}/v1`, OPENAI_API_KEY: 'sk-fake',
             OPENAI_MODEL: 'qwen3-coder-plus', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' },
      node22: true,
    }),
    // Its edit tools and its shell refuse a file not read in the session.
    turns: (c) => [
      { tool: 'read_file', args: { file_path: `${c.proj}/src/app.txt` } },
      { tool: 'edit', args: { file_path: `${c.proj}/src/app.txt`, old_string: 'world', new_string: 'EDITED' } },
      { tool: 'read_file', args: { file_path: `${c.proj}/src/held.txt` } },
      { tool: 'edit', args: { file_path: `${c.proj}/src/held.txt`, old_string: 'world', new_string: 'EDITED' } },
      { tool: 'run_shell_command', args: { command: SED, description: 'edit with sed', is_background: false } },
      { tool: 'run_shell_command', args: { command: GATE, description: 'format', is_background: false } },
      { text: 'finished' },
    ],
    heldTurn: 3,
    sedTurn: 4,
  },

  opencode: {
    install: 'opencode',
    config: '.opencode/plugins/leasehold.js',
    setup: (c) => {
      write(join(c.proj, 'opencode.json'), {
        $schema: 'https://opencode.ai/config.json',
        provider: { fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake',
          options: { baseURL: `http://127.0.0.1:${c.port}/v1`, apiKey: 'sk-fake' },
          models: { 'fake-model': { name: 'Fake model', tool_call: true, limit: { context: 128000, output: 8192 } } } } },
        model: 'fake/fake-model', small_model: 'fake/fake-model', enabled_providers: ['fake'],
        autoupdate: false, share: 'disabled', lsp: false, formatter: false,
        permission: { edit: 'allow', bash: 'allow', external_directory: 'allow' },
      });
      // At start opencode installs @opencode-ai/plugin into each config folder (over a minute of
      // retries offline) unless node_modules/ is there and package-lock.json lists it; the
      // Leasehold plugin imports nothing from it.
      for (const d of [join(c.proj, '.opencode'), join(c.home, '.config/opencode')]) {
        mkdirSync(join(d, 'node_modules'), { recursive: true });
        write(join(d, 'package-lock.json'), { packages: { '': { dependencies: { '@opencode-ai/plugin': '1.18.33' } } } });
      }
    },
    command: () => ({
      args: ['run', '--format', 'json', TASK],
      env: { OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1',
             OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
             OPENCODE_DISABLE_SHARE: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1' },
    }),
    // edit refuses a file not read in the session.
    turns: (c) => [
      { tool: 'read', args: { filePath: `${c.proj}/src/app.txt` } },
      { tool: 'edit', args: { filePath: `${c.proj}/src/app.txt`, oldString: 'world', newString: 'EDITED' } },
      { tool: 'read', args: { filePath: `${c.proj}/src/held.txt` } },
      { tool: 'edit', args: { filePath: `${c.proj}/src/held.txt`, oldString: 'world', newString: 'EDITED' } },
      { tool: 'bash', args: { command: SED, description: 'edit with sed' } },
      { tool: 'bash', args: { command: GATE, description: 'format' } },
      { text: 'finished' },
    ],
    heldTurn: 3,
    sedTurn: 4,
  },
};
