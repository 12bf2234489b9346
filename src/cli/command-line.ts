// The ferry commands that ferry prints for the user to run next ("Next:", hints): rendered
// so they run as printed in a POSIX shell — each argument quoted when it needs to be, and
// the target flags the user gave repeated, since the next command must reach the same
// service (a plan made with --data-dir X is not found without it).

/** The global flags that choose a target (GlobalFlags' own, named here so globals.ts can word its hints with ferryCommand). */
export interface TargetFlags {
  profile?: string;
  baseUrl?: string;
  apiKeyFile?: string;
  dataDir?: string;
  client?: string;
}

/** One argument as a POSIX shell reads it back unchanged. */
export function shellQuote(arg: string): string {
  if (arg !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The flags that chose this run's target, as given on the command line (environment and profile defaults carry over by themselves). */
export function targetArgs(flags: TargetFlags): string[] {
  const args: string[] = [];
  if (flags.profile) args.push('--profile', flags.profile);
  if (flags.baseUrl) args.push('--base-url', flags.baseUrl);
  if (flags.apiKeyFile) args.push('--api-key-file', flags.apiKeyFile);
  if (flags.dataDir && !flags.baseUrl) args.push('--data-dir', flags.dataDir);
  if (flags.client) args.push('--client', flags.client);
  return args;
}

/** `ferry TARGET… ARGS…` ready to paste; `target` from targetArgs. */
export function ferryCommand(args: string[], target: string[] = []): string {
  return ['ferry', ...target, ...args].map(shellQuote).join(' ');
}
