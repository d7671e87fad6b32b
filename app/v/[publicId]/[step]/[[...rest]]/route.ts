import { serveStep } from '@/server/api/pages/step-route';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ publicId: string; step: string; rest?: string[] }> };

/**
 * Every step's pages and forms (`/v/<public id>/<segment>/…`): the link mailed to the subject or
 * the manager, the SMS and question forms, the ID check's upload and its vendor's round trip.
 * Each method declares its own (server/verification/methods/<method>/routes/).
 */
export async function GET(request: Request, context: Context) {
  return serveStep(request, await context.params);
}

export async function POST(request: Request, context: Context) {
  return serveStep(request, await context.params);
}
