// The data types whose records carry file attachments, by key (data-types.ts). The public
// API reads attachments of these under a connection and takes uploads for most of them;
// ferry takes uploads for all of them, since it keeps the files itself (docs/api.md,
// "Attachments").
export const ATTACHMENT_DATA_TYPES: ReadonlySet<string> = new Set([
  'invoices',
  'bills',
  'customers',
  'suppliers',
  'directCosts',
  'directIncomes',
  'billCreditNotes',
  'transfers',
]);

export function hasAttachments(dataTypeKey: string): boolean {
  return ATTACHMENT_DATA_TYPES.has(dataTypeKey);
}
