import type { CaseRecord } from '@/server/cases/case-record';
import { settingString } from '@/server/verification/step-settings';

/** Whom a case's manager step asks: the name and address given at creation, or null. */
export function managerContact(record: CaseRecord): { name: string; email: string } | null {
  const email = settingString(record, 'manager', 'manager_email');
  return email ? { name: settingString(record, 'manager', 'manager_name') ?? '', email } : null;
}
