import type { api } from '../../api';

/** The project as the admin API answers it (GET /api/admin/projects/:projectId). */
export type Detail = Extract<Awaited<ReturnType<typeof api.projects.get>>, { status: 200 }>['body']['project'];
/** A PATCH of the project's settings. */
export type Update = Parameters<typeof api.projects.update>[0]['body'];
/** Saves a change: null when saved (the page says `done`), else the message to show. */
export type Save = (body: Update, done: string) => Promise<string | null>;
