import { handleAuthRequest } from '@/server/api/console/handle-auth-request';

export const dynamic = 'force-dynamic';

export const GET = handleAuthRequest;
export const POST = handleAuthRequest;
