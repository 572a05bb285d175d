import type { AppRoute, ClientInferResponseBody } from '@ts-rest/core';
import type { z } from 'zod';
import type { Contract, MfaChallengeResponseSchema, SessionResponseSchema } from '../../contract';

/** The route `R` of the contract's router `G`, or never. */
type RouteOf<T, G extends keyof T, R extends keyof T[G]> = T[G][R] extends infer Route extends AppRoute ? Route : never;

/**
 * The body a route answers with `status` (200 unless given), as the contract declares it: the type a
 * test reads an answer of the HTTP API as, e.g. `post<ApiBody<'mfa', 'verify'>>(...)`.
 */
export type ApiBody<G extends keyof Contract, R extends keyof Contract[G], S extends number = 200> = ClientInferResponseBody<
  RouteOf<Contract, G, R>,
  S & keyof RouteOf<Contract, G, R>['responses']
>;

/** The same for a route of the console's admin API, e.g. `json<AdminBody<'billing', 'connect'>>(res, 200)`. */
export type AdminBody<G extends keyof Contract['admin'], R extends keyof Contract['admin'][G], S extends number = 200> = ClientInferResponseBody<
  RouteOf<Contract['admin'], G, R>,
  S & keyof RouteOf<Contract['admin'], G, R>['responses']
>;

/** A sign-in's answer (email, magic link, OAuth code exchange, MFA verify) when it starts a session. */
export type SessionBody = z.infer<typeof SessionResponseSchema>;
/** A sign-in's answer when a second step is due: the MFA challenge (or the enrollment challenge). */
export type ChallengeBody = z.infer<typeof MfaChallengeResponseSchema>;
