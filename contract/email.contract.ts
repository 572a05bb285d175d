import { c } from './common';

export const emailContract = c.router({}, { strictStatusCodes: true });
