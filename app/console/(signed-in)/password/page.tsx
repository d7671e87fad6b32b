'use client';

import { useSession } from '../../_lib/session';
import { ChangePassword } from '../change-password';

export default function PasswordPage() {
  const { me } = useSession();
  return <ChangePassword hasPassword={me.has_password} onChanged={() => {}} />;
}
