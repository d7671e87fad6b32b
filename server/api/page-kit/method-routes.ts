/**
 * A method's pages and forms, served under `/v/<public id>/<segment>/…` by the one route every
 * step shares (app/v/[publicId]/[step]/[[...rest]]): each method's folder declares its own in
 * `routes/`, and `server/verification/methods/routes.ts` lists them.
 */
export type StepHandler = (request: Request, path: StepPath) => Promise<Response>;

export interface StepPath {
  publicId: string;
  /** The path after the segment, split: `[]` for the segment itself, `[token]` for a link. */
  rest: readonly string[];
}

export interface MethodRoutes {
  /** The path segment after `/v/<public id>/`. */
  segment: string;
  /**
   * Handlers by the rest of the path: `''` for the segment itself, a fixed name (`start`), or
   * `':token'` for one segment that is a mailed link's token.
   */
  paths: Readonly<Record<string, Partial<Record<'GET' | 'POST', StepHandler>>>>;
}

/**
 * A method's page script (in its `routes/`, listed in `methods/page-scripts.ts`): where the pages
 * load it from, and its body (read once per process).
 */
export interface PageScript {
  path: string;
  load: () => Buffer;
}
