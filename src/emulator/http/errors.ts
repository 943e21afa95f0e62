/** The §7 status names, used as ErrorBody.error. */
export const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface ErrorBody {
  message: string | string[];
  error: string;
  statusCode: number;
}

/** Thrown by handlers; the server turns it into an ErrorBody answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string | string[],
    readonly headers: Record<string, string> = {},
  ) {
    super(Array.isArray(messages) ? messages.join('; ') : messages);
    this.name = 'HttpError';
  }

  body(): ErrorBody {
    return { message: this.messages, error: STATUS_NAMES[this.status] ?? 'Error', statusCode: this.status };
  }
}

export const badRequest = (...messages: string[]): HttpError =>
  new HttpError(400, messages.length === 1 ? (messages[0] as string) : messages);
export const notFound = (message: string): HttpError => new HttpError(404, message);
