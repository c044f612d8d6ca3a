// MAIL_WORKER (docs/mail.md): where `serve` delivers mail; anything but the two words is refused at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';

test('MAIL_WORKER: thread by default, inline on request, anything else refused', () => {
  assert.equal(loadConfig({}).mailWorker, 'thread');
  assert.equal(loadConfig({ MAIL_WORKER: '' }).mailWorker, 'thread');
  assert.equal(loadConfig({ MAIL_WORKER: 'inline' }).mailWorker, 'inline');
  assert.equal(loadConfig({ MAIL_WORKER: ' thread ' }).mailWorker, 'thread');
  assert.throws(() => loadConfig({ MAIL_WORKER: 'process' }), /MAIL_WORKER must be thread or inline, got "process"/);
});
