// Uploads `files` files of `size` bytes to one attachment upload URL as multipart/form-data
// (one file part, as browsers and curl -F send it), `concurrency` at a time, and prints
// JSON: { ok, statuses, seconds, mibPerSecond }. Run as a child process, so building and
// sending the bodies does not share the service's event loop.
// Usage: node bench/upload-load.mjs '{"url":"http://127.0.0.1:1234/companies/…/attachment","headers":{},"files":20,"size":10485760,"concurrency":4}'
import { fetch, FormData } from 'undici';

const { url, headers = {}, files = 20, size = 10 * 1024 * 1024, concurrency = 4 } = JSON.parse(process.argv[2] ?? '{}');
// Not one repeated byte: nothing on the way may make light work of the file.
const content = Buffer.alloc(size);
for (let i = 0; i < size; i += 4) content.writeUInt32LE((i * 2_654_435_761) >>> 0, i);

const statuses = {};
let next = 0;
async function worker() {
  while (next < files) {
    const n = next++;
    const form = new FormData();
    form.append('file', new Blob([content], { type: 'application/pdf' }), `scan-${n}.pdf`);
    const response = await fetch(url, { method: 'POST', headers, body: form });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: Math.min(concurrency, files) }, worker));
const seconds = (performance.now() - started) / 1000;
process.stdout.write(JSON.stringify({ ok: statuses[200] ?? 0, statuses, seconds, mibPerSecond: (files * size) / (1024 * 1024) / seconds }));
