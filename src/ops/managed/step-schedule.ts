// Step 2: the migration date and the client's contacts (each `Name <email>` or a bare
// e-mail, merged by e-mail).
import { inputError } from '../errors.js';
import { contactText, parseContact, type Contact } from './plan.js';
import type { StepEnv, StepInputs, StepResult } from './step-env.js';

const CONTACT_EXAMPLES = 'Examples: --contact "Jo Bloggs <jo@acme.example>" or --contact jo@acme.example (repeat --contact for more).';

export async function stepSchedule(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const date = (inputs.date ?? plan.schedule.date).trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(date) || Number.isNaN(Date.parse(date))) {
    throw inputError(`--date ${date} is not a date.`, 'Use YYYY-MM-DD (or an ISO 8601 date-time), e.g. --date 2026-12-01');
  }
  const contacts: Contact[] = [...plan.contacts];
  for (const text of inputs.contacts ?? []) {
    const contact = parseContact(text);
    if (!contact) throw inputError(`--contact ${JSON.stringify(text)} is neither "Name <email>" nor an e-mail address.`, CONTACT_EXAMPLES);
    const same = contacts.findIndex((c) => c.email.toLowerCase() === contact.email.toLowerCase());
    // A bare e-mail for a contact already named keeps the name.
    if (same >= 0) contacts[same] = { ...contact, name: contact.name || contacts[same]!.name };
    else contacts.push(contact);
  }
  if (contacts.length === 0) throw inputError('Missing --contact "Name <email>" (or a bare e-mail).', `Name at least one contact at the client. ${CONTACT_EXAMPLES}`);
  plan.schedule.date = date;
  plan.contacts = contacts;
  if (Date.parse(date) < Date.now() - 86_400_000) env.log(`note: ${date} is in the past.`);
  return { state: 'done', notes: `${date} · ${contacts.map(contactText).join(', ')}`, details: { schedule: plan.schedule, contacts } };
}
