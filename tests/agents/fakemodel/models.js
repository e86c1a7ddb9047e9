'use strict';
// GET /v1/models and /v1/models/<id>: one answer that reads as an Anthropic and
// as an OpenAI model list. The ids are the script's "models" (or "fake-model").
const { sendJson } = require('./sse');

function route(method, path) {
  if (method !== 'GET') return null;
  if (/^\/v1\/models$/.test(path)) return 'list';
  if (/^\/v1\/models\/[^/:]+$/.test(path)) return 'one';
  return null;
}

function entry(id) {
  return { id, object: 'model', type: 'model', display_name: id, created: 0,
    created_at: '2025-01-01T00:00:00Z', owned_by: 'fake' };
}

function respond(op, { res, path, models }) {
  if (op === 'one') return sendJson(res, 200, entry(decodeURIComponent(path.split('/').pop())));
  const data = models.map(entry);
  sendJson(res, 200, { object: 'list', data, has_more: false, first_id: models[0], last_id: models.at(-1) });
}

module.exports = { name: 'models', route, offered: () => null, respond, toolResults: () => [] };
