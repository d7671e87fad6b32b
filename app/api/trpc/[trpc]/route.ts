import { handleConsoleRequest } from '@/server/console/handle-console-request';

export const dynamic = 'force-dynamic';

export const GET = handleConsoleRequest;
export const POST = handleConsoleRequest;
