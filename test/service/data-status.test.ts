// A dataStatus entry is read in two steps, the data set and then its latest pull, and a
// worker may commit between them: the entry stays whole (Complete always with its last
// success) whichever of the two the commit came before.
import { describe, expect, it } from 'vitest';
import { dataStatusRecord } from '../../src/service/wire/sync-records.js';
import type { DatasetRow } from '../../src/service/store/datasets.js';
import type { PullRow } from '../../src/service/store/pulls.js';

const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-02T00:00:00Z';

const dataset = (fields: Partial<DatasetRow> = {}): DatasetRow => ({
  company_id: 'c', data_type: 'invoices', visible_generation: 1, next_generation: 3, latest_sync_id: 'second',
  latest_successful_sync_id: 'first', last_successful_sync: T1, last_requested: T2, ...fields,
});

const pull = (fields: Partial<PullRow>): PullRow => ({
  seq: 2, id: 'second', company_id: 'c', connection_id: 'k', data_type: 'invoices', status: 'Fetching', status_description: null, error_message: null,
  requested: T2, completed: null, progress: 50, generation: 2, cursor: null, fetched: 0, attempts: 0, not_before: null, lease_until: null, validation: null, priority: 0,
  ...fields,
});

describe('dataStatus entries', () => {
  it('a pull still running: the last success is the data set\'s', () => {
    expect(dataStatusRecord(dataset(), pull({}))).toEqual({
      dataType: 'invoices', currentStatus: 'Fetching', lastSuccessfulSync: T1, latestSyncId: 'second', latestSuccessfulSyncId: 'first',
    });
  });

  it('a pull that ended Complete after the data set was read: the last success is that pull', () => {
    const ended = pull({ status: 'Complete', completed: T2, progress: 100 });
    const expected = { dataType: 'invoices', currentStatus: 'Complete', lastSuccessfulSync: T2, latestSyncId: 'second', latestSuccessfulSyncId: 'second' };
    expect(dataStatusRecord(dataset(), ended)).toEqual(expected);
    // The same as when the data set was read after the commit.
    expect(dataStatusRecord(dataset({ latest_successful_sync_id: 'second', last_successful_sync: T2 }), ended)).toEqual(expected);
    // The first sync of a data set: nothing succeeded before it.
    expect(dataStatusRecord(dataset({ latest_successful_sync_id: null, last_successful_sync: null }), ended)).toEqual(expected);
  });

  it('a pull that failed keeps the earlier success', () => {
    expect(dataStatusRecord(dataset(), pull({ status: 'FetchError', completed: T2 }))).toMatchObject({ currentStatus: 'FetchError', lastSuccessfulSync: T1, latestSuccessfulSyncId: 'first' });
  });
});
