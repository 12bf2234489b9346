// Uploads rounds of `files` files of `size` bytes as multipart/form-data (one file part, as
// browsers and curl -F send it), `concurrency` at a time, each round to the next of
// `targets` (an invoice's upload URL and its attachments URL), deleting the round's files
// afterwards so that no limit is reached; rounds go on until `seconds` have passed (one
// round at least). Prints JSON: { rounds, ok, statuses, seconds, mibPerSecond }. Run as a
// child process, so building and sending the bodies does not share the service's event loop.
// Usage: node bench/upload-load.mjs '{"targets":[{"upload":"http://…/attachment","attachments":"http://…/attachments"}],"headers":{},"files":20,"size":10485760,"concurrency":4,"seconds":0}'
import { fetch, FormData } from 'undici';

const { targets, headers = {}, files = 20, size = 10 * 1024 * 1024, concurrency = 4, seconds = 0 } = JSON.parse(process.argv[2] ?? '{}');
// Not one repeated byte: nothing on the way may make light work of the file.
const content = Buffer.alloc(size);
for (let i = 0; i < size; i += 4) content.writeUInt32LE((i * 2_654_435_761) >>> 0, i);

const statuses = {};
const count = (status) => (statuses[status] = (statuses[status] ?? 0) + 1);

async function round({ upload, attachments }) {
  const ids = [];
  let next = 0;
  const worker = async () => {
    while (next < files) {
      const n = next++;
      const form = new FormData();
      form.append('file', new Blob([content], { type: 'application/pdf' }), `scan-${n}.pdf`);
      const response = await fetch(upload, { method: 'POST', headers, body: form });
      const body = await response.text();
      count(response.status);
      if (response.status === 200) ids.push(JSON.parse(body).id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files) }, worker));
  // A build without DELETE answers 404 and keeps the files: its limits are none.
  for (const id of ids) await (await fetch(`${attachments}/${id}`, { method: 'DELETE', headers })).arrayBuffer();
}

const started = performance.now();
let rounds = 0;
do await round(targets[rounds++ % targets.length]);
while ((performance.now() - started) / 1000 < seconds);
const elapsed = (performance.now() - started) / 1000;
const ok = statuses[200] ?? 0;
process.stdout.write(JSON.stringify({ rounds, ok, statuses, seconds: elapsed, mibPerSecond: (ok * size) / (1024 * 1024) / elapsed }));
