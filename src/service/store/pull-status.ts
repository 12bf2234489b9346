// The states of a pull operation, as the public API names them, and which are open,
// finished or errored.

export const PULL_STATUSES = [
  'Initial', 'Queued', 'Fetching', 'MapQueued', 'Mapping', 'Complete', 'FetchError', 'MapError', 'InternalError',
  'ProcessingQueued', 'Processing', 'ProcessingError', 'ValidationQueued', 'Validating', 'ValidationError', 'AuthError',
  'Cancelled', 'NotSupported', 'RateLimitError', 'PermissionsError', 'PrerequisiteNotMet',
] as const;
export type PullStatus = (typeof PULL_STATUSES)[number];

export const OPEN_STATUSES: PullStatus[] = ['Queued', 'Fetching', 'Mapping'];
const ERROR_STATUSES = new Set<PullStatus>([
  'FetchError', 'MapError', 'InternalError', 'ProcessingError', 'ValidationError', 'AuthError', 'RateLimitError',
  'PermissionsError', 'PrerequisiteNotMet', 'NotSupported',
]);
export const isErrored = (status: PullStatus) => ERROR_STATUSES.has(status);
export const isFinished = (status: PullStatus) => !OPEN_STATUSES.includes(status) && status !== 'Initial';
