// What the `ferry managed` commands share: their group, and the flags of `ferry managed
// step N` and `ferry managed run` (every answer a step needs is a flag, so CI never needs
// a prompt).
import { Option, type Command } from 'commander';
import { group } from '../command.js';
import { durationArg, positiveNumber, wholeNumber } from '../flags.js';
import { noEventsOption } from '../event-waits.js';

export function managedGroup(program: Command): Command {
  return group(program, 'managed', 'The six-step managed migration, run by the support team (admin key)');
}

export const PLAN_FILE_HELP = 'the plan file (default ./ferry-plan.json)';

export function addStepOptions(command: Command): Command {
  return command
    .option('--file <plan.json>', PLAN_FILE_HELP)
    .option('--confirm', 'say yes to the step (a person confirms steps 3 and 4); no prompt')
    .option('--by <name>', 'who confirms, for the handover report (default: $FERRY_USER; asked on a terminal)')
    .option('--notes <text>', 'a note recorded with the step')
    .option('--platform <key>', 'step 1: the platform key (ferry integrations list --route managed)')
    .option('--app-client-id <id>', "step 1: the client id of the client's OAuth app at the platform (on the sandbox: ferry sandbox apps create|list)")
    .option('--companies <file.csv>', 'step 1: the company CSV (tokens stay in it; the plan records its path)')
    .option('--pilot <externalId>', 'steps 1 and 5: the pilot company (default: the first row)')
    .option('--date <YYYY-MM-DD>', 'step 2: the migration date')
    .option('--contact <"Name <email>">', 'step 2: a contact at the client, "Name <email>" or a bare e-mail (repeat for more)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--concurrency <n>', 'steps 5 and 6: companies migrated and checked at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'steps 5 and 6: at most R requests a second', positiveNumber('--max-rate'))
    .option('--timeout <duration>', "steps 5 and 6: how long one company's fresh sync may take, e.g. 90s, 10m (default 10m)", durationArg('--timeout'))
    .option('--out <dir>', 'step 6: the handover report folder (default: <plan>-report/ beside the plan)')
    .option('--redo', 'do a done step (1-4) again, e.g. a new date or a new confirmation time')
    .addOption(noEventsOption())
    .addOption(new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 500)));
}
