// 32 hex digits (16 bytes) written as a UUID: 8-4-4-4-12, the version and variant bits left
// as the digits give them.
export function uuidText(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
