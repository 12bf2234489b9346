// Attachments of synced records against a real service on 127.0.0.1: uploads as multipart
// (undici's FormData, and the public accounting SDK's own request) and as raw bytes, then
// list, get and byte-identical download; the size limit at exactly 10 MiB and one byte
// past it; the refusals (file, name, record, data set, connection, owner).
import { CodatAccounting } from '@codat/accounting';
import { createHash } from 'node:crypto';
import { fetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENT_BYTES } from '../../src/platforms/limits.js';
import { atRest } from '../helpers/at-rest.js';
import { basic } from '../helpers/service.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { createClient, linkedCompany, readAll, type Linked } from '../helpers/sync.js';

let h: Harness;
let linked: Linked;
let invoiceId: string;
let billId: string;

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 3);
  expect((await h.api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
  await h.drain();
  const status = await h.api.call('GET', `/companies/${linked.companyId}/dataStatus`);
  expect(status.body.invoices.currentStatus).toBe('Complete');
  invoiceId = (await readAll(h.api, linked.companyId, 'invoices'))[0].id;
  billId = (await readAll(h.api, linked.companyId, 'bills'))[0].id;
});
afterAll(async () => h?.stop());

/** Every byte value, then a run that is not a multiple of anything a parser buffers by. */
function binaryFile(size = 256 * 41 + 7): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 256;
  return bytes;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const dataBase = (l: Linked, path: string, recordId: string) => `/companies/${l.companyId}/connections/${l.connectionId}/data/${path}/${encodeURIComponent(recordId)}/attachments`;
const pushPath = (l: Linked, path: string, recordId: string, spelling = 'attachment') => `/companies/${l.companyId}/connections/${l.connectionId}/push/${path}/${encodeURIComponent(recordId)}/${spelling}`;

interface Sent {
  status: number;
  headers: Headers;
  body: any;
}

/** A body of unknown length (chunked), so only counting as it arrives can tell its size. */
function chunked(parts: Array<Buffer | { fill: number; size: number }>): ReadableStream<Uint8Array> {
  const queue = [...parts];
  return new ReadableStream({
    pull(controller) {
      const next = queue.shift();
      if (!next) return controller.close();
      if (Buffer.isBuffer(next)) return controller.enqueue(next);
      const block = 1024 * 1024;
      controller.enqueue(Buffer.alloc(Math.min(block, next.size), next.fill));
      if (next.size > block) queue.unshift({ fill: next.fill, size: next.size - block });
    },
  });
}

async function send(path: string, body: FormData | Buffer | ReadableStream<Uint8Array> | undefined, options: { apiKey?: string; headers?: Record<string, string> } = {}): Promise<Sent> {
  const response = await fetch(h.baseUrl + path, {
    method: 'POST',
    headers: { authorization: basic(options.apiKey ?? h.adminKey), ...options.headers },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers as unknown as Headers, body: text ? JSON.parse(text) : undefined };
}

function form(bytes: Uint8Array, fileName: string, type = 'application/octet-stream', field = 'file'): FormData {
  const data = new FormData();
  data.append(field, new Blob([bytes], { type }), fileName);
  return data;
}

async function download(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(h.baseUrl + path, { headers: { authorization: basic(h.adminKey), ...headers } });
  return { status: response.status, headers: response.headers as unknown as Headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('upload, list, get, download', () => {
  it('a multipart upload is listed, read and downloaded byte for byte with its type and name', async () => {
    const bytes = binaryFile();
    const uploaded = await send(pushPath(linked, 'invoices', invoiceId), form(bytes, 'scan 2026 – März.pdf', 'application/pdf'));
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'scan 2026 – März.pdf',
      contentType: 'application/pdf',
      fileSize: bytes.length,
      dateCreated: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      includeWhenSent: false,
    });
    const id = uploaded.body.id;

    const list = await h.api.call('GET', dataBase(linked, 'invoices', invoiceId));
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ attachments: [uploaded.body] });
    const one = await h.api.call('GET', `${dataBase(linked, 'invoices', invoiceId)}/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(uploaded.body);

    const file = await download(`${dataBase(linked, 'invoices', invoiceId)}/${id}/download`);
    expect(file.status).toBe(200);
    expect(file.bytes.equals(bytes)).toBe(true);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-length')).toBe(String(bytes.length));
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="scan 2026 _ M_rz.pdf"; filename*=UTF-8''${encodeURIComponent('scan 2026 – März.pdf')}`);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(file.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    // A client that asks for application/octet-stream (the public API's label) gets it.
    const labelled = await download(`${dataBase(linked, 'invoices', invoiceId)}/${id}/download`, { accept: 'application/json;q=1, application/octet-stream;q=0' });
    expect(labelled.headers.get('content-type')).toBe('application/octet-stream');
    expect(labelled.bytes.equals(bytes)).toBe(true);
  });

  it('both spellings of the upload path work for every type; a record\'s list holds only its own files, oldest first', async () => {
    const first = await send(pushPath(linked, 'bills', billId, 'attachments'), form(Buffer.from('one'), 'one.txt', 'text/plain'));
    const second = await send(pushPath(linked, 'bills', billId, 'attachment'), form(Buffer.from('two'), 'two.txt', 'text/plain'));
    expect([first.status, second.status]).toEqual([200, 200]);
    const list = await h.api.call('GET', dataBase(linked, 'bills', billId));
    expect(list.body.attachments.map((a: any) => a.name)).toEqual(['one.txt', 'two.txt']);
    // Customers have attachments too, though the public API takes no uploads for them: ferry keeps the files itself.
    const customerId = (await readAll(h.api, linked.companyId, 'customers'))[0].id;
    expect((await send(pushPath(linked, 'customers', customerId), form(Buffer.from('c'), 'c.txt'))).status).toBe(200);
    expect((await h.api.call('GET', dataBase(linked, 'customers', customerId))).body.attachments).toHaveLength(1);
    // Another invoice's list is empty.
    const invoices = await readAll(h.api, linked.companyId, 'invoices');
    expect((await h.api.call('GET', dataBase(linked, 'invoices', invoices[1].id))).body).toEqual({ attachments: [] });
  });

  it('the raw file as the body, named by ?fileName= (curl --data-binary), keeps its Content-Type', async () => {
    const bytes = binaryFile(1000);
    const raw = await send(`${pushPath(linked, 'invoices', invoiceId)}?fileName=${encodeURIComponent('raw.png')}`, bytes, { headers: { 'content-type': 'image/png' } });
    expect(raw.status, JSON.stringify(raw.body)).toBe(200);
    expect(raw.body).toMatchObject({ name: 'raw.png', contentType: 'image/png', fileSize: 1000 });
    const file = await download(`${dataBase(linked, 'invoices', invoiceId)}/${raw.body.id}/download`);
    expect(file.bytes.equals(bytes)).toBe(true);
    expect(file.headers.get('content-type')).toBe('image/png');
  });
});

describe('the size limit', () => {
  it('a file of exactly 10 MiB is taken; one byte more is a 400 naming the limit and the size received', async () => {
    const exact = Buffer.alloc(MAX_ATTACHMENT_BYTES, 0xa5);
    exact[0] = 0;
    exact[exact.length - 1] = 0xff;
    const taken = await send(pushPath(linked, 'invoices', invoiceId), form(exact, 'exact.bin'));
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body.fileSize).toBe(MAX_ATTACHMENT_BYTES);
    const back = await download(`${dataBase(linked, 'invoices', invoiceId)}/${taken.body.id}/download`);
    expect(sha256(back.bytes)).toBe(sha256(exact));

    const over = Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 0x5a);
    const refused = await send(pushPath(linked, 'invoices', invoiceId), form(over, 'over.bin'));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ statusCode: 400, service: 'PublicApi', correlationId: expect.any(String) });
    expect(refused.body.error).toBe('The attachment is larger than the limit of 10485760 bytes (10 MiB) per file: the file received was 10485761 bytes.');
    expect(refused.body.validation.errors).toEqual([{ itemId: 'file', message: 'must be at most 10485760 bytes', validatorName: 'Attachment' }]);

    // Raw: the declared length is refused before the body is read, with the exact size.
    const raw = await send(`${pushPath(linked, 'invoices', invoiceId)}?fileName=over.bin`, over, { headers: { 'content-type': 'application/octet-stream' } });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toBe('The attachment is larger than the limit of 10485760 bytes (10 MiB) per file: the file received was 10485761 bytes.');

    // Of unknown length, counted as it arrives.
    const rawChunked = await send(`${pushPath(linked, 'invoices', invoiceId)}?fileName=over.bin`, chunked([{ fill: 1, size: MAX_ATTACHMENT_BYTES + 1 }]), { headers: { 'content-type': 'application/octet-stream' } });
    expect(rawChunked.status).toBe(400);
    expect(rawChunked.body.error).toBe('The attachment is larger than the limit of 10485760 bytes (10 MiB) per file: the file received was 10485761 bytes.');

    // None of the refusals stored anything; the connection still answers.
    const list = await h.api.call('GET', dataBase(linked, 'invoices', invoiceId));
    expect(list.body.attachments.map((a: any) => a.name)).not.toContain('over.bin');
  });

  it('a multipart body far past the limit: refused by its declared length unread, or once the file passes the limit when chunked', async () => {
    const huge = Buffer.alloc(4 * MAX_ATTACHMENT_BYTES + 2 * 1024 * 1024, 7);
    const declared = await send(pushPath(linked, 'invoices', invoiceId), form(huge, 'huge.bin'));
    expect(declared.status).toBe(400);
    const [, size] = /the request body received was (\d+) bytes\.$/.exec(declared.body.error) ?? [];
    expect(Number(size)).toBeGreaterThan(huge.length);

    const boundary = 'ferry-test-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const body = chunked([head, { fill: 7, size: huge.length }, tail]);
    const counted = await send(pushPath(linked, 'invoices', invoiceId), body, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    expect(counted.status).toBe(400);
    const [, read] = /^The attachment is larger than the limit of 10485760 bytes \(10 MiB\) per file: the file received was (\d+) bytes\.$/.exec(counted.body.error) ?? [];
    expect(Number(read)).toBeGreaterThan(MAX_ATTACHMENT_BYTES);
    expect(Number(read)).toBeLessThan(huge.length);
  });
});

describe('refusals', () => {
  const path = () => pushPath(linked, 'invoices', invoiceId);

  it('no file part, an empty file, more than one file: 400', async () => {
    const fieldsOnly = new FormData();
    fieldsOnly.append('note', 'no file here');
    const none = await send(path(), fieldsOnly);
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('The request has no file: send multipart/form-data with one file part (a part with a filename).');

    const empty = await send(path(), form(Buffer.alloc(0), 'empty.txt'));
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('The file is empty (0 bytes).');
    const emptyRaw = await send(`${path()}?fileName=empty.txt`, Buffer.alloc(0), { headers: { 'content-type': 'text/plain' } });
    expect(emptyRaw.body.error).toBe('The file is empty (0 bytes).');

    const two = form(Buffer.from('a'), 'a.txt');
    two.append('second', new Blob([Buffer.from('b')]), 'b.txt');
    const both = await send(path(), two);
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('Send one file per request: this one has more than one file part.');

    const noBoundary = await send(path(), Buffer.from('x'), { headers: { 'content-type': 'multipart/form-data' } });
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body.error).toBe('The multipart/form-data body could not be read: send one file part, with a boundary in the Content-Type.');

    const unnamed = await send(path(), Buffer.from('x'), { headers: { 'content-type': 'application/octet-stream' } });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.validation.errors[0].itemId).toBe('fileName');
  });

  it('file names: over 255 characters, with a path, a control character or an invisible format character: 400', async () => {
    const long = await send(path(), form(Buffer.from('x'), `${'n'.repeat(252)}.txt`));
    expect(long.status).toBe(400);
    expect(long.body.error).toBe('The file name is longer than 255 characters.');
    expect((await send(path(), form(Buffer.from('x'), `${'n'.repeat(251)}.txt`))).status).toBe(200);

    for (const name of ['../etc/passwd', 'C:\\Users\\me\\a.txt', 'dir/a.txt']) {
      const refused = await send(path(), form(Buffer.from('x'), name));
      expect(refused.status, name).toBe(400);
      expect(refused.body.error).toBe('The file name contains a path separator (/ or \\); send the file name alone.');
    }
    const control = await send(`${path()}?fileName=${encodeURIComponent('a\u0001b.txt')}`, Buffer.from('x'), { headers: { 'content-type': 'text/plain' } });
    expect(control.status).toBe(400);
    expect(control.body.error).toBe('The file name contains a control character (NUL, newline, tab…).');

    // An invisible format character (Unicode Cf) would disguise the name: U+202E shows fdp.exe as exe.pdf.
    for (const [name, code] of [['invoice-\u202Efdp.exe', '202E'], ['a\u200Bb.pdf', '200B'], ['\uFEFFscan.pdf', 'FEFF']]) {
      for (const refused of [await send(path(), form(Buffer.from('x'), name!)), await send(`${path()}?fileName=${encodeURIComponent(name!)}`, Buffer.from('x'), { headers: { 'content-type': 'text/plain' } })]) {
        expect(refused.status, name).toBe(400);
        expect(refused.body.error).toBe(`The file name contains the invisible format character U+${code}, which can disguise what is shown (U+202E shows fdp.exe as exe.pdf).`);
        expect(refused.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['fileName']);
      }
    }
  });

  it('an unknown record is 404, a data type without attachments 404, an unknown attachment 404', async () => {
    const unknown = await send(pushPath(linked, 'invoices', 'no-such-invoice'), form(Buffer.from('x'), 'x.txt'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe(`No invoices record no-such-invoice for connection ${linked.connectionId}.`);
    expect((await h.api.call('GET', dataBase(linked, 'invoices', 'no-such-invoice'))).status).toBe(404);
    expect((await h.api.call('GET', `${dataBase(linked, 'invoices', invoiceId)}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await h.api.call('GET', `${dataBase(linked, 'invoices', invoiceId)}/00000000-0000-4000-8000-000000000000/download`)).status).toBe(404);
    const items = await h.api.call('GET', dataBase(linked, 'items', 'any'));
    expect(items.status).toBe(404);
    expect(items.body.error).toBe('items records have no attachments.');
    expect((await h.api.call('GET', dataBase(linked, 'nonsense', 'any'))).status).toBe(404);
  });

  it('another client\'s company: 403, and nothing is read from the body', async () => {
    const otherKey = await createClient(h.api, h.adminKey, 'Other Ltd', 'Paid');
    const upload = await send(pushPath(linked, 'invoices', invoiceId), form(Buffer.from('x'), 'x.txt'), { apiKey: otherKey });
    expect(upload.status).toBe(403);
    expect((await h.api.call('GET', dataBase(linked, 'invoices', invoiceId), { apiKey: otherKey })).status).toBe(403);
  });

  it('a data set not synced yet is 409; a connection not Linked is 400, as pushes are', async () => {
    const fresh = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2, { name: 'Not Synced Ltd' });
    const notSynced = await send(pushPath(fresh, 'invoices', invoiceId), form(Buffer.from('x'), 'x.txt'));
    expect(notSynced.status).toBe(409);
    expect((await h.api.call('GET', dataBase(fresh, 'invoices', invoiceId))).status).toBe(409);

    const unlinked = await h.api.call('PATCH', `/companies/${fresh.companyId}/connections/${fresh.connectionId}`, { body: { status: 'Unlinked' } });
    expect(unlinked.status).toBe(200);
    const refused = await send(pushPath(fresh, 'invoices', invoiceId), form(Buffer.from('x'), 'x.txt'));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('The connection is Unlinked; only a Linked connection can push. Reauthorize it first.');
  });

  it('the other routes keep their JSON body rules: multipart elsewhere is still refused', async () => {
    const elsewhere = await send('/companies', form(Buffer.from('{"name":"x"}'), 'c.json', 'application/json'));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error).toBe('Request bodies must be JSON (Content-Type: application/json).');
  });
});

describe('deleting', () => {
  it('a company takes its attachments with it', async () => {
    const other = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2, { name: 'Deleted Ltd' });
    expect((await h.api.call('POST', `/companies/${other.companyId}/data/all`)).status).toBe(204);
    await h.drain();
    const id = (await readAll(h.api, other.companyId, 'invoices'))[0].id;
    expect((await send(pushPath(other, 'invoices', id), form(binaryFile(), 'gone.bin'))).status).toBe(200);
    const count = () => atRest(h).value('SELECT count(*) FROM attachments WHERE company_id = ?', other.companyId);
    expect(await count()).toBe(1);
    expect((await h.api.call('DELETE', `/companies/${other.companyId}`)).status).toBe(204);
    expect(await count()).toBe(0);
  });
});

describe('the public accounting SDK', () => {
  const sdk = () => new CodatAccounting({ security: { authHeader: basic(h.adminKey) }, serverURL: h.baseUrl });
  const ids = () => ({ companyId: linked.companyId, connectionId: linked.connectionId, invoiceId });

  it('uploadAttachment, listAttachments, getAttachment and downloadAttachment work as sent by @codat/accounting', async () => {
    const sdk = new CodatAccounting({ security: { authHeader: basic(h.adminKey) }, serverURL: h.baseUrl });
    // The SDK's declared type: a plain Uint8Array (it sends its decimal text; every byte value survives).
    const bytes = new Uint8Array(binaryFile(4096 + 13));
    const ids = { companyId: linked.companyId, connectionId: linked.connectionId, invoiceId };
    const before = (await sdk.invoices.listAttachments(ids)).attachmentsDataset?.attachments?.length ?? 0;

    const uploaded = await sdk.invoices.uploadAttachment({ ...ids, requestBody: { content: bytes, requestBody: 'sdk-upload.pdf' } });
    expect(uploaded.statusCode).toBe(200);

    const list = await sdk.invoices.listAttachments(ids);
    expect(list.statusCode).toBe(200);
    const attachments = list.attachmentsDataset?.attachments ?? [];
    expect(attachments).toHaveLength(before + 1);
    const mine = attachments.at(-1)!;
    expect(mine).toMatchObject({ name: 'sdk-upload.pdf', contentType: 'application/pdf', fileSize: bytes.length, includeWhenSent: false });

    const one = await sdk.invoices.getAttachment({ ...ids, attachmentId: mine.id! });
    expect(one.statusCode).toBe(200);
    expect(one.attachment).toMatchObject({ id: mine.id, name: 'sdk-upload.pdf' });

    const file = await sdk.invoices.downloadAttachment({ ...ids, attachmentId: mine.id! });
    expect(file.statusCode).toBe(200);
    expect(Buffer.from(file.data!).equals(bytes)).toBe(true);

    const missing = await sdk.invoices.getAttachment({ ...ids, attachmentId: '00000000-0000-4000-8000-000000000000' });
    expect(missing.statusCode).toBe(404);
    expect(missing.errorMessage?.statusCode).toBe(404);
  });

  it('a Node Buffer of text arrives exactly; one of binary bytes, which the SDK damages on the way, is refused with the remedy', async () => {
    const text = Buffer.from('Ferry fare, 2 × £60\n1,2,3 are not bytes here\n');
    const sent = await sdk().invoices.uploadAttachment({ ...ids(), requestBody: { content: text, requestBody: 'notes.txt' } });
    expect(sent.statusCode).toBe(200);
    const mine = (await sdk().invoices.listAttachments(ids())).attachmentsDataset!.attachments!.at(-1)!;
    expect(mine).toMatchObject({ name: 'notes.txt', contentType: 'text/plain', fileSize: text.length });
    const file = await download(`${dataBase(linked, 'invoices', invoiceId)}/${mine.id}/download`);
    expect(file.bytes.equals(text)).toBe(true);

    const damaged = await sdk().invoices.uploadAttachment({ ...ids(), requestBody: { content: binaryFile(), requestBody: 'scan.pdf' } });
    expect(damaged.statusCode).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(damaged.rawResponse!.data as ArrayBuffer)).error).toMatch(/^The file arrived as text with bytes replaced by U\+FFFD.*new Uint8Array\(buffer\)/);
  });

  it('through the SDK, 10 MiB is taken and one byte more refused', async () => {
    const exact = new Uint8Array(MAX_ATTACHMENT_BYTES).fill(255);
    expect((await sdk().invoices.uploadAttachment({ ...ids(), requestBody: { content: exact, requestBody: 'big.bin' } })).statusCode).toBe(200);
    const over = new Uint8Array(MAX_ATTACHMENT_BYTES + 1).fill(255);
    const refused = await sdk().invoices.uploadAttachment({ ...ids(), requestBody: { content: over, requestBody: 'big.bin' } });
    expect(refused.statusCode).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(refused.rawResponse!.data as ArrayBuffer)).error)
      .toBe('The attachment is larger than the limit of 10485760 bytes (10 MiB) per file: the file received was 10485761 bytes.');
  });
});
