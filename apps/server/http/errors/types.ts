export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503;
export interface ErrorEntry {
  status: ErrorStatus;
  message: string;
}
