'use strict';
// Server-sent events and JSON answers shared by the wire modules.

function startSse(res) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  return {
    // An event with a name line (Anthropic, OpenAI Responses).
    event(name, data) { res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`); },
    // A bare data line (Chat Completions, Gemini).
    data(data) { res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`); },
    end() { res.end(); },
  };
}

function sendJson(res, status, obj) {
  const text = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// A rough token count, enough for clients that only display it.
function tokens(body) {
  return Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4));
}

// Tool arguments as the JSON text a wire carries; a string is sent as is.
function argText(args) {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

// Tool arguments as an object; a string that is not JSON is wrapped.
function argObject(args) {
  if (typeof args !== 'string') return args ?? {};
  try { return JSON.parse(args); } catch { return { input: args }; }
}

// The text of a tool result, whatever shape the client gave it.
function flatText(v) {
  if (v == null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(flatText).join('\n');
  if (typeof v === 'object') {
    if (typeof v.text === 'string') return v.text;
    return JSON.stringify(v);
  }
  return String(v);
}

module.exports = { startSse, sendJson, tokens, argText, argObject, flatText };
