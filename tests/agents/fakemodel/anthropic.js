'use strict';
// Anthropic Messages: POST /v1/messages (streamed or not) and count_tokens.
const { startSse, sendJson, tokens, argObject, flatText } = require('./sse');

function route(method, path) {
  if (method === 'POST' && path === '/v1/messages') return 'messages';
  if (method === 'POST' && path === '/v1/messages/count_tokens') return 'count_tokens';
  return null;
}

function offered(op, body) {
  return op === 'messages' ? (body?.tools ?? []).map((t) => t.name) : null;
}

function blocks(answer) {
  const out = [];
  if (answer.text) out.push({ type: 'text', text: answer.text });
  for (const c of answer.calls) {
    out.push({ type: 'tool_use', id: c.id, name: c.name, input: argObject(c.args) });
  }
  return out;
}

function respond(op, { res, body, answer, seq }) {
  const model = body?.model ?? 'claude-fake';
  if (op === 'count_tokens') return sendJson(res, 200, { input_tokens: tokens(body) });
  const content = blocks(answer);
  const stop = answer.calls.length ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: tokens(body), output_tokens: tokens(content),
    cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const id = `msg_fake_${seq}`;
  if (!body?.stream) {
    return sendJson(res, 200, { id, type: 'message', role: 'assistant', model, content,
      stop_reason: stop, stop_sequence: null, usage });
  }
  const s = startSse(res);
  s.event('message_start', { type: 'message_start', message: { id, type: 'message',
    role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
    usage: { ...usage, output_tokens: 1 } } });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      s.event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      s.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      s.event('content_block_start', { type: 'content_block_start', index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      s.event('content_block_delta', { type: 'content_block_delta', index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    s.event('content_block_stop', { type: 'content_block_stop', index });
  });
  s.event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens } });
  s.event('message_stop', { type: 'message_stop' });
  s.end();
}

// Every tool_result block in the conversation: { id, text, isError }.
function toolResults(body) {
  const out = [];
  for (const m of body?.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ id: b.tool_use_id, text: flatText(b.content), isError: !!b.is_error });
    }
  }
  return out;
}

module.exports = { name: 'anthropic', route, offered, respond, toolResults };
