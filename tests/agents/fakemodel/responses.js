'use strict';
// OpenAI Responses: POST /v1/responses, streamed as Codex reads it. A call to a
// tool the request declares as "custom" (freeform, like Codex's apply_patch) is
// a custom_tool_call with the raw input; any other is a function_call.
const { startSse, sendJson, tokens, argText, flatText } = require('./sse');

function route(method, path) {
  if (method === 'POST' && /^(\/v1)?\/responses$/.test(path)) return 'responses';
  return null;
}

function declared(body) {
  // Tools may be nested in namespaces ({ type: "namespace", tools: [...] }).
  const out = [];
  const walk = (list) => {
    for (const t of list ?? []) {
      if (Array.isArray(t.tools)) walk(t.tools);
      out.push(t);
    }
  };
  walk(body?.tools);
  return out;
}

function offered(op, body) {
  return op === 'responses' ? declared(body).map((t) => t.name ?? t.type) : null;
}

function items(answer, seq, body) {
  const custom = new Set(declared(body).filter((t) => t.type === 'custom').map((t) => t.name));
  const out = [];
  if (answer.text) {
    out.push({ type: 'message', id: `msg_${seq}`, status: 'completed', role: 'assistant',
      content: [{ type: 'output_text', text: answer.text, annotations: [] }] });
  }
  answer.calls.forEach((c, i) => {
    const call_id = c.id;
    if (custom.has(c.name)) {
      out.push({ type: 'custom_tool_call', id: `ctc_${seq}_${i}`, call_id, name: c.name,
        input: typeof c.args === 'string' ? c.args : (c.args.input ?? argText(c.args)), status: 'completed' });
    } else {
      out.push({ type: 'function_call', id: `fc_${seq}_${i}`, call_id, name: c.name,
        arguments: argText(c.args), status: 'completed' });
    }
  });
  return out;
}

function respond(op, { res, body, answer, seq }) {
  const model = body?.model ?? 'gpt-fake';
  const output = items(answer, seq, body);
  const inTok = tokens(body), outTok = tokens(output);
  const usage = { input_tokens: inTok, input_tokens_details: { cached_tokens: 0 },
    output_tokens: outTok, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inTok + outTok };
  const response = { id: `resp_${seq}`, object: 'response', created_at: Math.floor(Date.now() / 1000),
    model, status: 'completed', output, usage };
  if (body?.stream === false) return sendJson(res, 200, response);
  const s = startSse(res);
  let n = 0;
  const ev = (type, data) => s.event(type, { type, sequence_number: n++, ...data });
  ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: item.content[0].text });
    } else {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev('response.completed', { response });
  s.end();
}

// Every function/custom tool output in the input: { id, text }.
function toolResults(body) {
  const out = [];
  for (const it of Array.isArray(body?.input) ? body.input : []) {
    if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output') {
      out.push({ id: it.call_id, text: flatText(it.output) });
    }
  }
  return out;
}

module.exports = { name: 'responses', route, offered, respond, toolResults };
