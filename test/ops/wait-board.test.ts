// What `sync --wait` knows between rounds: the unfinished companies and the counts of the
// progress line, kept up to date from the companies read again, without looking at the others.
import { describe, expect, it } from 'vitest';
import type { CompanyRun, Tracked } from '../../src/ops/sync/runs.js';
import { WaitBoard } from '../../src/ops/sync/wait-board.js';

/** A started company with these data types' statuses; its data types count how often they are looked at. */
function company(companyId: string, statuses: string[]): CompanyRun & { looks: () => number } {
  let looks = 0;
  class Watched extends Map<string, Tracked> {
    override values() {
      looks += 1;
      return super.values();
    }
  }
  const dataTypes = new Watched(statuses.map((status, i) => [`type${i}`, { id: `${companyId}-${i}`, status }]));
  return { companyId, started: true, dataTypes, looks: () => looks };
}

describe('WaitBoard', () => {
  it('counts companies done and data types complete or failed, and follows each company as it is read again', () => {
    const a = company('a', ['Queued', 'Complete']);
    const b = company('b', ['Complete', 'Complete']);
    const c = company('c', ['Fetching', 'AuthError']);
    const notStarted: CompanyRun = { companyId: 'd', started: false, dataTypes: new Map(), error: 'no Linked connection' };
    const board = new WaitBoard([a, b, c, notStarted]);
    expect(board.pending).toBe(2);
    expect(board.types).toBe(6);
    expect(board.counts()).toEqual({ done: 2, complete: 3, errors: 2 });
    expect(board.finished()).toEqual([b]);
    expect(board.finished()).toEqual([]);
    expect(board.unfinished(new Set(['a', 'b', 'x']))).toEqual([a]);
    expect(board.waitsFor('c')).toBe(true);
    expect(board.waitsFor('b')).toBe(false);

    a.dataTypes.get('type0')!.status = 'Complete';
    board.update(a);
    expect(board.counts()).toEqual({ done: 3, complete: 4, errors: 2 });
    expect(board.finished()).toEqual([a]);
    expect(board.waitsFor('a')).toBe(false);

    // A company that disappeared while waited for is done, counted as an error, and did not finish.
    c.error = 'the company disappeared while waiting';
    board.update(c);
    expect(board.pending).toBe(0);
    expect(board.counts()).toEqual({ done: 4, complete: 4, errors: 3 });
    expect(board.finished()).toEqual([]);
  });

  it('looks only at the company read again, however many others it waits for', () => {
    const others = Array.from({ length: 1000 }, (_, i) => company(`c${i}`, ['Queued', 'Queued']));
    const read = company('read', ['Fetching']);
    const board = new WaitBoard([...others, read]);
    const looked = others.map((run) => run.looks());
    read.dataTypes.get('type0')!.status = 'Complete';
    board.update(read);
    expect(board.counts().done).toBe(1);
    expect(board.unfinished(new Set(['read']))).toEqual([]);
    expect(others.map((run) => run.looks())).toEqual(looked);
  });
});
