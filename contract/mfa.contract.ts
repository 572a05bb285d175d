import { c } from './common';

export const mfaContract = c.router({}, { strictStatusCodes: true });
