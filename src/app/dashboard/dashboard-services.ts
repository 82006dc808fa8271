// What the dashboard's pages work with: the toolgate's own services (no HTTP round trip), and the
// job store for long operations.
import type { Request, Response } from 'express';
import type { RouteServices } from '../../../routes/route-services';
import type { ServiceLogger } from '../logger';
import type { JobStore } from './jobs';

export type DashboardServices = Pick<
  RouteServices,
  'accessRules' | 'agents' | 'approvals' | 'attachments' | 'mcp' | 'previews' | 'registry' | 'runs' | 'sequelize' | 'toolkits'
> & {
  jobs: JobStore;
  logger: ServiceLogger;
};

/** One page or one form's action: a named function its router mounts on its path. */
export type PageHandler = (d: DashboardServices, req: Request, res: Response) => Promise<void>;
