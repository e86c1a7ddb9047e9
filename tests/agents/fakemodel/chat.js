'use strict';
// OpenAI Chat Completions: POST /v1/chat/completions (streamed or not).
const { startSse, sendJson, tokens, argText, flatText } = require('./sse');

function route(method, path) {
  if (method === 'POST' && /^(\/v1)?\/chat\/completions$/.test(path)) return 'chat';
  return null;
}

function offered(op, body) {
  return op === 'chat' ? (body?.tools ?? []).map((t) => t.function?.name ?? t.name) : null;
}

function respond(op, { res, body, answer, seq }) {
  const model = body?.model ?? 'chat-fake';
  const tool_calls = answer.calls.map((c) => ({ id: c.id, type: 'function',
    function: { name: c.name, arguments: argText(c.args) } }));
  const finish = tool_calls.length ? 'tool_calls' : 'stop';
  const pt = tokens(body), ct = tokens(answer);
  const usage = { prompt_tokens: pt, completion_tokens: ct, total_tokens: pt + ct };
  const id = `chatcmpl-${seq}`, created = Math.floor(Date.now() / 1000);
  if (!body?.stream) {
    const message = { role: 'assistant', content: answer.text ?? null };
    if (tool_calls.length) message.tool_calls = tool_calls;
    return sendJson(res, 200, { id, object: 'chat.completion', created, model,
      choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const s = startSse(res);
  const chunk = (delta, finish_reason = null, extra = {}) => s.data({ id, object: 'chat.completion.chunk',
    created, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  chunk({ role: 'assistant', content: '' });
  if (answer.text) chunk({ content: answer.text });
  tool_calls.forEach((tc, index) => chunk({ tool_calls: [{ index, ...tc }] }));
  chunk({}, finish, { usage });
  if (body.stream_options?.include_usage) {
    s.data({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  }
  s.data('[DONE]');
  s.end();
}

// Every role "tool" message in the conversation: { id, text }.
function toolResults(body) {
  return (body?.messages ?? []).filter((m) => m.role === 'tool')
    .map((m) => ({ id: m.tool_call_id, text: flatText(m.content) }));
}

module.exports = { name: 'chat', route, offered, respond, toolResults };
