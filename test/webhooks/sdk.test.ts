// The official platform SDK's webhook consumer operations (list, create, delete) against
// ferry's routes, with the SDK's response validation on.
import { CodatPlatform } from '@codat/platform';
import { ErrorMessage } from '@codat/platform/sdk/models/errors/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestService } from '../helpers/stack.js';

let t: TestService;
let sdk: CodatPlatform;

beforeAll(async () => {
  t = await startTestStack('service');
  const { apiKey } = await t.createClient('SDK Hooks Ltd', 'Paid');
  sdk = new CodatPlatform({ authHeader: `Basic ${Buffer.from(apiKey).toString('base64')}`, serverURL: t.baseUrl, retryConfig: { strategy: 'none' } });
});

afterAll(async () => {
  await t.stop();
});

it('creates, lists and deletes consumers through the SDK', async () => {
  const created = await sdk.webhooks.createConsumer({ url: 'https://example.com/hooks', eventTypes: ['read.completed'], companyTags: ['region:eu'] });
  expect(created).toMatchObject({ url: 'https://example.com/hooks', eventTypes: ['read.completed'], companyTags: ['region:eu'], disabled: false });
  const off = await sdk.webhooks.createConsumer({ url: 'https://example.com/off', eventTypes: ['company.created'], disabled: true });
  expect(off.disabled).toBe(true);
  const list = await sdk.webhooks.listConsumers();
  expect(list.results?.map((c) => c.id)).toEqual([created.id, off.id]);
  await sdk.webhooks.deleteConsumer({ webhookId: created.id! });
  expect((await sdk.webhooks.listConsumers()).results?.map((c) => c.id)).toEqual([off.id]);
  const err = await sdk.webhooks.deleteConsumer({ webhookId: created.id! }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ErrorMessage);
  expect((err as ErrorMessage).statusCode).toBe(404);
});

it('answers a bad consumer with the documented 400', async () => {
  const err = await sdk.webhooks.createConsumer({ url: 'ftp://example.com/x', eventTypes: ['read.completed'] }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ErrorMessage);
  expect((err as ErrorMessage).statusCode).toBe(400);
});
