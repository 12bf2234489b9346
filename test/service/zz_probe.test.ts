import { it } from 'vitest';
import { startService } from '../helpers/service.js';

it('probe', async () => {
  const t = await startService({ rateLimit: 2 });
  const show = (label: string, r: { status: number; headers: Headers; text: string }) =>
    process.stdout.write(`${label}: ${r.status} ${JSON.stringify([...r.headers])} ${r.text.slice(0, 300)}\n`);
  show('nokey', await t.call('GET', '/companies', { apiKey: null }));
  show('a1', await t.call('GET', '/companies?tags=region=uk&query=name=Who?x'));
  show('a2', await t.call('GET', '/companies'));
  show('a3', await t.call('GET', '/companies'));
  const t2 = await startService();
  show('405', await t2.call('DELETE', '/companies'));
  show('big', await t2.call('POST', '/companies', { rawBody: JSON.stringify({ name: 'x'.repeat(1100000) }), headers: { 'content-type': 'application/json' } }));
  show('xml', await t2.call('POST', '/companies', { rawBody: '<a/>', headers: { 'content-type': 'application/xml' } }));
  show('text', await t2.call('POST', '/companies', { rawBody: 'hi', headers: { 'content-type': 'text/plain' } }));
  show('nobody', await t2.call('POST', '/companies', { rawBody: 'hi' }));
  show('q', await t2.call('GET', '/companies?query=name%3DWho%3F&foo=a+b'));
  show('q2', await t2.call('GET', '/companies?query=name=Who?&foo=a+b'));
  const c = await t2.call('POST', '/companies', { body: { name: 'x' } });
  const conn = await t2.call('POST', `/companies/${c.body.id}/connections`, { body: { platformKey: 'gbol' } });
  show('conn', conn);
  show('del', await t2.call('DELETE', `/companies/${c.body.id}/connections/${conn.body.id}`));
  show('head', await t2.call('HEAD', `/companies`));
  show('nf', await t2.call('GET', `/nope`));
  await t.stop(); await t2.stop();
});
