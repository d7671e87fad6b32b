import { handleRestRequest } from '@/server/api/rest/handle-rest-request';

export const dynamic = 'force-dynamic';

export const GET = handleRestRequest;
export const POST = handleRestRequest;
export const PUT = handleRestRequest;
export const PATCH = handleRestRequest;
export const DELETE = handleRestRequest;
export const HEAD = handleRestRequest;
export const OPTIONS = handleRestRequest;
