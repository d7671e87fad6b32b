import { handleConsoleRequest } from '@/server/api/console/handle-console-request';

export const dynamic = 'force-dynamic';

export const GET = handleConsoleRequest;
export const POST = handleConsoleRequest;
