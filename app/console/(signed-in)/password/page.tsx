'use client';

import { useSession } from '@/app/console/_lib/session';
import { ChangePassword } from '@/app/console/(signed-in)/change-password';

export default function PasswordPage() {
  const { me } = useSession();
  return <ChangePassword hasPassword={me.has_password} onChanged={() => {}} />;
}
