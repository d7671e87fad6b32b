import { handleAuthRequest } from '@/server/console/handle-auth-request';

export const dynamic = 'force-dynamic';

export const GET = handleAuthRequest;
export const POST = handleAuthRequest;
