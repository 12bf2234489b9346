// The base of the sync tests' scripted platforms: pages come from the test (gated, failing
// or repeating as a scenario needs, which the sandbox cannot be told to do at a given page);
// a pull never verifies or writes, so those calls are refused.
import type { PlatformAdapter, PlatformPage } from '../../src/service/adapters/adapter.js';
import type { Tokens } from '../../src/service/adapters/verifier.js';

export abstract class ReadOnlyPlatform implements PlatformAdapter {
  abstract fetchPage(key: string, tokens: Tokens, dataType: string, cursor: string | undefined, pageSize: number): Promise<PlatformPage>;

  needsRefresh(): boolean {
    return false;
  }

  async ensureFresh(_key: string, tokens: Tokens): Promise<Tokens> {
    return tokens;
  }

  verify(): never {
    throw new Error('not used');
  }

  push(): never {
    throw new Error('not used');
  }

  update(): never {
    throw new Error('not used');
  }

  remove(): never {
    throw new Error('not used');
  }

  pushStatus(): never {
    throw new Error('not used');
  }
}
