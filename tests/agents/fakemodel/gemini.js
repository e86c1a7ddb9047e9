'use strict';
// Gemini: POST /v1beta/models/<model>:streamGenerateContent?alt=sse,
// :generateContent, :countTokens, :embedContent, and the model list.
const { startSse, sendJson, tokens, argObject, flatText } = require('./sse');

const RE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):([A-Za-z]+)$/;

function route(method, path) {
  const m = RE.exec(path);
  if (method === 'POST' && m) return m[2];
  if (method === 'GET' && /^\/v1(beta|alpha)\/models(\/[^/:]+)?$/.test(path)) return 'models';
  return null;
}

function offered(op, body) {
  if (op !== 'streamGenerateContent' && op !== 'generateContent') return null;
  return (body?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
}

function respond(op, { res, body, answer, seq, path }) {
  const model = (RE.exec(path) ?? [])[1] ?? 'gemini-fake';
  if (op === 'countTokens') return sendJson(res, 200, { totalTokens: tokens(body) });
  if (op === 'embedContent') return sendJson(res, 200, { embedding: { values: new Array(8).fill(0.1) } });
  if (op === 'batchEmbedContents') {
    return sendJson(res, 200, { embeddings: (body?.requests ?? []).map(() => ({ values: new Array(8).fill(0.1) })) });
  }
  if (op === 'models') {
    return sendJson(res, 200, { models: [{ name: `models/${model}`, supportedGenerationMethods: ['generateContent'] }] });
  }
  if (op !== 'streamGenerateContent' && op !== 'generateContent') {
    return sendJson(res, 404, { error: { code: 404, message: `fake model: no ${op}`, status: 'NOT_FOUND' } });
  }
  const parts = [];
  if (answer.text) parts.push({ text: answer.text });
  answer.calls.forEach((c) => parts.push({ functionCall: { id: c.id, name: c.name, args: argObject(c.args) } }));
  const pt = tokens(body), ct = tokens(parts);
  const reply = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: pt, candidatesTokenCount: ct, totalTokenCount: pt + ct },
    modelVersion: model, responseId: `resp_${seq}` };
  if (op === 'generateContent') return sendJson(res, 200, reply);
  const s = startSse(res);
  s.data(reply);
  s.end();
}

// Every functionResponse part in the conversation: { id, name, text }.
function toolResults(body) {
  const out = [];
  for (const c of body?.contents ?? []) {
    for (const p of c.parts ?? []) {
      if (p.functionResponse) {
        out.push({ id: p.functionResponse.id, name: p.functionResponse.name, text: flatText(p.functionResponse.response) });
      }
    }
  }
  return out;
}

module.exports = { name: 'gemini', route, offered, respond, toolResults };
