import { c } from './common';

export const oauthContract = c.router({}, { strictStatusCodes: true });
