// How the accounting platforms page their data: what the sandbox serves and what the
// service's adapters ask for.

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
