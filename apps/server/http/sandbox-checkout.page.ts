import { createHash } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import type { BillingErrorCode } from '../../../application/billing/errors';
import type { SandboxCheckoutView } from '../../../application/billing/processors';
import type { ProcessorUseCases } from '../../../application/billing/use-cases';
import { formatMoney } from '../../../domain/billing/money';
import { escapeHtml } from '../../../infrastructure/mail/i18next-email-renderer';
import { ERRORS } from './errors';

/** Where the sandbox processor sends a checkout's browser: `${PUBLIC_URL}/sandbox/checkout/<id>`. */
export const SANDBOX_CHECKOUT_PATH = '/sandbox/checkout';

/** Test cards the page lists; the sandbox treats them as Stripe treats its test cards. */
export const SANDBOX_TEST_CARDS: ReadonlyArray<{ number: string; outcome: string }> = [
  { number: '4242 4242 4242 4242', outcome: 'Succeeds (pm_card_visa)' },
  { number: '4000 0000 0000 0002', outcome: 'Declined (pm_card_chargeDeclined)' },
  { number: '4000 0000 0000 9995', outcome: 'Declined: insufficient funds' },
  { number: '4000 0000 0000 0341', outcome: 'Accepted, but every later charge fails (pm_card_chargeCustomerFail)' },
];
const DEFAULT_CARD = SANDBOX_TEST_CARDS[0]!.number;
const CARD_MAX_LENGTH = 64;

/**
 * The page's only style, inline in a <style> element allowed by its hash in the Content-Security-
 * Policy: the page loads nothing (no scripts, no fonts, no images) and works without JavaScript.
 */
const CSS = [
  'body{margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,"Segoe UI",Roboto,"Noto Sans",Arial,sans-serif;color:#202124}',
  'main{max-width:440px;margin:0 auto;background:#fff;border-radius:8px;padding:32px;box-shadow:0 1px 3px rgba(0,0,0,.08)}',
  '.mode{display:inline-block;margin:0 0 16px;padding:2px ' +
    '8px;border-radius:4px;background:#fff4e5;color:#8a4b00;font-size:12px;font-weight:600;letter-spacing:.02em}',
  'h1{margin:0 0 4px;font-size:20px}',
  '.price{margin:0 0 16px;font-size:28px;font-weight:600}',
  '.price small{font-size:14px;font-weight:400;color:#5f6368}',
  'dl{margin:0 0 20px;display:grid;grid-template-columns:auto 1fr;gap:6px 12px;font-size:14px}',
  'dt{color:#5f6368}dd{margin:0}',
  'label{display:block;margin:0 0 6px;font-size:14px;font-weight:600}',
  'input{box-sizing:border-box;width:100%;padding:10px 12px;border:1px solid ' +
    '#c4c7c5;border-radius:6px;font-size:16px;font-family:ui-monospace,Menlo,Consolas,monospace}',
  'button{margin:16px 0 0;width:100%;padding:12px;border:0;border-radius:6px;background:#1a73e8;color:#fff;font-size:16px;font-weight:600;cursor:pointer}',
  '.error{margin:0 0 16px;padding:10px 12px;border-radius:6px;background:#fce8e6;color:#a50e0e;font-size:14px}',
  '.cards{margin:20px 0 0;font-size:13px;color:#5f6368}',
  '.cards ul{margin:6px 0 0;padding-left:18px}',
  '.cards code{font-family:ui-monospace,Menlo,Consolas,monospace;color:#202124}',
  '.cancel{display:block;margin:16px 0 0;text-align:center;font-size:14px;color:#1a73e8}',
].join('');
const CSS_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

/** The Content-Security-Policy of the page: nothing loads; the form posts here, then the browser goes to `successUrl`. */
function contentSecurityPolicy(view: SandboxCheckoutView | null): string {
  // form-action also governs the redirect that follows the POST (browsers check it), so the
  // success URL's origin is allowed beside 'self'.
  const successOrigin = view ? originOf(view.successUrl) : null;
  return [
    "default-src 'none'",
    `style-src ${CSS_HASH}`,
    `form-action 'self'${successOrigin ? ` ${successOrigin}` : ''}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

const e = escapeHtml;

function document(title: string, content: string): string {
  return (
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<meta name="robots" content="noindex, nofollow">\n<title>${e(title)}</title>\n<style>${CSS}</style>\n</head>\n` +
    `<body>\n<main>\n<p class="mode">SANDBOX: TEST MODE, NO REAL MONEY</p>\n${content}\n</main>\n</body>\n</html>\n`
  );
}

const intervalWord = (interval: string) => (interval === 'year' ? 'year' : interval === 'month' ? 'month' : interval);

/** The checkout form: what is bought, for how much, the card field (a test card filled in) and the test cards. */
export function renderCheckoutPage(view: SandboxCheckoutView, options: { error?: string; card?: string } = {}): string {
  const price = formatMoney({ amount: view.amount, currency: view.currency });
  // A one-off payment (a credit pack) has no interval: it is bought, not subscribed to.
  const oneOff = view.interval === '';
  const details: Array<[string, string]> = oneOff
    ? [['Item', view.planName]]
    : [
        ['Plan', view.planName],
        ['Price', view.priceName],
      ];
  if (view.quantity !== null) details.push(['Seats', String(view.quantity)]);
  if (view.trialDays !== null)
    details.push(['Trial', `${view.trialDays} days free: nothing is charged today, then ${price} per ${intervalWord(view.interval)}`]);
  if (view.percentOff !== null) details.push(['Discount', `${view.percentOff}% off the first invoice`]);
  if (view.email !== null) details.push(['Email', view.email]);
  const card = options.card ?? DEFAULT_CARD;
  const title = oneOff ? `Buy ${view.planName}` : `Subscribe to ${view.planName}`;
  return document(
    title,
    `<h1>${e(title)}</h1>\n` +
      (oneOff
        ? `<p class="price">${e(price)} <small>once</small></p>\n`
        : `<p class="price">${e(price)} <small>per ${e(intervalWord(view.interval))}</small></p>\n`) +
      `<dl>${details.map(([term, value]) => `<dt>${e(term)}</dt><dd>${e(value)}</dd>`).join('')}</dl>\n` +
      (options.error ? `<p class="error" role="alert">${e(options.error)}</p>\n` : '') +
      `<form method="post" action="${e(`${SANDBOX_CHECKOUT_PATH}/${encodeURIComponent(view.id)}`)}">\n` +
      `<label for="card">Card number</label>\n` +
      `<input id="card" name="card" value="${e(card)}" maxlength="${CARD_MAX_LENGTH}" autocomplete="off" inputmode="numeric" required>\n` +
      `<button type="submit">${view.trialDays !== null ? 'Start trial' : `Pay ${e(price)}`}</button>\n` +
      `</form>\n` +
      `<div class="cards">Test cards (any expiry and CVC; a pm_card_... id works too):<ul>` +
      SANDBOX_TEST_CARDS.map((c) => `<li><code>${e(c.number)}</code> ${e(c.outcome)}</li>`).join('') +
      `</ul></div>\n` +
      `<a class="cancel" href="${e(view.cancelUrl)}" rel="noreferrer">Cancel and return</a>`,
  );
}

/** A page with a message and, when there is somewhere to go, a link there. */
export function renderMessagePage(title: string, message: string, link?: { href: string; text: string }): string {
  return document(
    title,
    `<h1>${e(title)}</h1>\n<p>${e(message)}</p>${link ? `\n<a class="cancel" href="${e(link.href)}" rel="noreferrer">${e(link.text)}</a>` : ''}`,
  );
}

export type SandboxCheckoutUseCases = Pick<ProcessorUseCases, 'sandboxCheckout' | 'completeSandboxCheckout'>;

/**
 * The sandbox processor's hosted checkout, at /sandbox/checkout/{id} (the `url` POST
 * billing/checkout answers with the sandbox): GET shows the page; POST (a form with `card`) pays
 * with that test card and sends the browser to successUrl (303); a declined or unknown card shows
 * the page again with the reason (402, 400). Unknown checkouts answer a 404 page, finished ones a
 * 409 page with a link onwards. Server-rendered, nothing loaded from elsewhere, no JavaScript.
 */
export function mountSandboxCheckout(app: express.Express, billing: SandboxCheckoutUseCases): void {
  const path = `${SANDBOX_CHECKOUT_PATH}/:id`;
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });

  const send = (res: Response, status: number, html: string, view: SandboxCheckoutView | null) => {
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(view));
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    res.status(status).type('html').send(html);
  };

  /** The page for a refusal that leaves nothing to pay here. */
  const refusalPage = (res: Response, code: BillingErrorCode, detail: string | undefined, view: SandboxCheckoutView | null) => {
    const { status, message } = ERRORS[code];
    if (code === 'checkout_not_open' && view) {
      const done = view.status === 'complete';
      return send(
        res,
        status,
        renderMessagePage(
          done ? 'Already paid' : 'Checkout expired',
          detail ?? message,
          done ? { href: view.successUrl, text: 'Continue' } : { href: view.cancelUrl, text: 'Return' },
        ),
        view,
      );
    }
    send(res, status, renderMessagePage(code === 'checkout_not_found' ? 'Checkout not found' : 'Checkout unavailable', detail ?? message), view);
  };

  const load = async (res: Response, id: string): Promise<SandboxCheckoutView | null> => {
    const r = await billing.sandboxCheckout(id);
    if (!r.ok) {
      refusalPage(res, r.error, r.detail, null);
      return null;
    }
    if (r.value.status !== 'open') {
      refusalPage(res, 'checkout_not_open', undefined, r.value);
      return null;
    }
    return r.value;
  };

  app.get(path, async (req: Request<{ id: string }>, res, next) => {
    try {
      const view = await load(res, req.params.id);
      if (view) send(res, 200, renderCheckoutPage(view), view);
    } catch (error) {
      next(error);
    }
  });

  /** Reads the form; a body too large or not decodable answers a page, not a fault. */
  const readForm = (req: Request, res: Response) =>
    new Promise<boolean>((resolve) =>
      form(req, res, (err?: unknown) => {
        if (!err) return resolve(true);
        const type = (err as { type?: string }).type;
        if (type === 'request.aborted') return resolve(false);
        const status = type === 'entity.too.large' ? 413 : type === 'encoding.unsupported' || type === 'charset.unsupported' ? 415 : 400;
        send(res, status, renderMessagePage('Checkout form not readable', 'The form could not be read: go back and submit it again.'), null);
        resolve(false);
      }),
    );

  app.post(path, async (req: Request<{ id: string }>, res, next) => {
    try {
      if (!(await readForm(req, res))) return;
      const raw = (req.body as Record<string, unknown> | undefined)?.card;
      const card = typeof raw === 'string' ? raw.trim() : '';
      const view = await load(res, req.params.id);
      if (!view) return;
      if (card === '' || card.length > CARD_MAX_LENGTH) {
        return send(
          res,
          400,
          renderCheckoutPage(view, { error: 'Enter a card number (one of the test cards below)', card: card.slice(0, CARD_MAX_LENGTH) }),
          view,
        );
      }
      const r = await billing.completeSandboxCheckout(view.id, card);
      if (r.ok) return res.redirect(303, r.value.redirectTo);
      if (r.error === 'card_declined' || r.error === 'invalid_payment_method') {
        return send(res, ERRORS[r.error].status, renderCheckoutPage(view, { error: r.detail ?? ERRORS[r.error].message, card }), view);
      }
      refusalPage(res, r.error, r.detail, view);
    } catch (error) {
      next(error);
    }
  });
}
