// Worker threads load compiled JavaScript: beside the caller in dist/, or, when the caller
// runs from src/ under the test runner, the copy of that file in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function threadUrl(file: string, callerUrl: string): URL {
  const url = new URL(file, callerUrl);
  if (existsSync(fileURLToPath(url))) return url;
  const at = url.href.lastIndexOf('/src/');
  return new URL(`${url.href.slice(0, at)}/dist/${url.href.slice(at + '/src/'.length)}`);
}
