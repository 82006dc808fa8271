// Migrate enabled_tools: start a dry run, an apply or an undo as a job, and follow it.
import { Router } from 'express';
import { InvalidFormFieldError } from '../../../errors';
import { pathId } from '../../../http/parse';
import { migrateEnabledTools } from '../../../legacy/migrate-enabled-tools';
import { undoEnabledTools } from '../../../legacy/undo-enabled-tools';
import type { DashboardServices } from '../dashboard-services';
import { checkedField, pageContext, textField } from '../form-data';
import type { JobKind } from '../jobs';
import { renderPage } from '../render';
import { JobPage, MigrationPage } from '../views/migration';

const MODES: readonly JobKind[] = ['dry_run', 'apply', 'undo'];

export function migrationPages(d: DashboardServices): Router {
  const router = Router();
  const manifest = d.registry.manifest;

  router.get('/migration', async (req, res) => {
    renderPage(res, 200, MigrationPage({ ctx: pageContext(req), jobs: await d.jobs.recent() }));
  });

  router.post('/migration/jobs', async (req, res) => {
    const mode = textField(req, 'mode') as JobKind;
    if (!MODES.includes(mode)) throw new InvalidFormFieldError('Choose a dry run, an apply or an undo.');
    const mapTypos = mode !== 'undo' && checkedField(req, 'map_typos');
    const id = await d.jobs.start(
      mode,
      mapTypos,
      (onProgress) =>
        mode === 'undo'
          ? undoEnabledTools(d.sequelize, manifest)
          : migrateEnabledTools(d.sequelize, manifest, { mode, mapTypos, onProgress }),
      (err) =>
        d.logger.error({ err: err instanceof Error ? { name: err.name, message: err.message } : typeof err }, 'dashboard job failed'),
    );
    res.redirect(303, `${req.baseUrl}/migration/jobs/${id}`);
  });

  router.get('/migration/jobs/:jobId', async (req, res) => {
    renderPage(res, 200, JobPage({ ctx: pageContext(req), job: await d.jobs.get(pathId(req.params, 'jobId')) }));
  });
  return router;
}
