// Preloaded with `node --import ./bench/rss-probe.mjs …` by the export bench: when the
// process exits, writes its peak resident set size (KiB, process.resourceUsage().maxRSS)
// to the file named by FERRY_BENCH_RSS_FILE. Works for any script, ferry's CLI included.
import { writeFileSync } from 'node:fs';

const file = process.env.FERRY_BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
