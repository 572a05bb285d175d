import { c } from './common';

export const sessionContract = c.router({}, { strictStatusCodes: true });
