/**
 * Stripe's test payment methods, as the sandbox honours them (https://docs.stripe.com/testing,
 * "Cards" and "Declined payments"). A `pm_card_*` id is cloned into a new `pm_sbx_...` payment
 * method when used, as Stripe clones it into a new `pm_...`; the checkout page takes the test card
 * numbers instead.
 *
 * - Cards with `declineOnAttach` are declined when attached to a customer (Stripe verifies the card
 *   on attach), with Stripe's decline code and message.
 * - `pm_card_chargeCustomerFail` (4000 0000 0000 0341) attaches, then every charge on it fails.
 */
export interface Decline {
  /** Stripe's `decline_code`. */
  readonly declineCode: string;
  /** Stripe's message for it. */
  readonly message: string;
}

export interface TestCard {
  readonly number: string;
  /** Stripe's `card.brand`. */
  readonly brand: string;
  readonly declineOnAttach?: Decline;
  readonly declineOnCharge?: Decline;
}

const generic: Decline = { declineCode: 'generic_decline', message: 'Your card was declined.' };
const insufficient: Decline = { declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' };
const lost: Decline = { declineCode: 'lost_card', message: 'Your card was declined.' };
const stolen: Decline = { declineCode: 'stolen_card', message: 'Your card was declined.' };
const expired: Decline = { declineCode: 'expired_card', message: 'Your card has expired.' };
const cvc: Decline = { declineCode: 'incorrect_cvc', message: "Your card's security code is incorrect." };
const processing: Decline = {
  declineCode: 'processing_error',
  message: 'An error occurred while processing your card. Try again in a little bit.',
};

/** The decline of a charge on a card that carries no decline of its own (a missing card). */
export const GENERIC_DECLINE: Decline = generic;

export const TEST_PAYMENT_METHODS: Readonly<Record<string, TestCard>> = {
  pm_card_visa: { number: '4242424242424242', brand: 'visa' },
  pm_card_visa_debit: { number: '4000056655665556', brand: 'visa' },
  pm_card_mastercard: { number: '5555555555554444', brand: 'mastercard' },
  pm_card_mastercard_debit: { number: '5200828282828210', brand: 'mastercard' },
  pm_card_mastercard_prepaid: { number: '5105105105105100', brand: 'mastercard' },
  pm_card_amex: { number: '378282246310005', brand: 'amex' },
  pm_card_discover: { number: '6011111111111117', brand: 'discover' },
  pm_card_diners: { number: '3056930009020004', brand: 'diners' },
  pm_card_jcb: { number: '3566002020360505', brand: 'jcb' },
  pm_card_unionpay: { number: '6200000000000005', brand: 'unionpay' },
  pm_card_chargeDeclined: { number: '4000000000000002', brand: 'visa', declineOnAttach: generic },
  pm_card_visa_chargeDeclined: { number: '4000000000000002', brand: 'visa', declineOnAttach: generic },
  pm_card_chargeDeclinedInsufficientFunds: { number: '4000000000009995', brand: 'visa', declineOnAttach: insufficient },
  pm_card_visa_chargeDeclinedInsufficientFunds: { number: '4000000000009995', brand: 'visa', declineOnAttach: insufficient },
  pm_card_chargeDeclinedLostCard: { number: '4000000000009987', brand: 'visa', declineOnAttach: lost },
  pm_card_visa_chargeDeclinedLostCard: { number: '4000000000009987', brand: 'visa', declineOnAttach: lost },
  pm_card_chargeDeclinedStolenCard: { number: '4000000000009979', brand: 'visa', declineOnAttach: stolen },
  pm_card_visa_chargeDeclinedStolenCard: { number: '4000000000009979', brand: 'visa', declineOnAttach: stolen },
  pm_card_chargeDeclinedExpiredCard: { number: '4000000000000069', brand: 'visa', declineOnAttach: expired },
  pm_card_visa_chargeDeclinedExpiredCard: { number: '4000000000000069', brand: 'visa', declineOnAttach: expired },
  pm_card_chargeDeclinedIncorrectCvc: { number: '4000000000000127', brand: 'visa', declineOnAttach: cvc },
  pm_card_visa_chargeDeclinedIncorrectCvc: { number: '4000000000000127', brand: 'visa', declineOnAttach: cvc },
  pm_card_chargeDeclinedProcessingError: { number: '4000000000000119', brand: 'visa', declineOnAttach: processing },
  pm_card_visa_chargeDeclinedProcessingError: { number: '4000000000000119', brand: 'visa', declineOnAttach: processing },
  pm_card_chargeCustomerFail: { number: '4000000000000341', brand: 'visa', declineOnCharge: generic },
};

export const isTestPaymentMethod = (id: string): boolean => Object.hasOwn(TEST_PAYMENT_METHODS, id);

/**
 * The test payment method a card typed on the checkout page stands for: a `pm_card_*` name, or a
 * test card number (spaces and dashes ignored), such as 4242 4242 4242 4242. Null for anything else.
 */
export function testPaymentMethodFor(card: string): string | null {
  const trimmed = card.trim();
  if (isTestPaymentMethod(trimmed)) return trimmed;
  const digits = trimmed.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return null;
  // The first name listed for a number is its canonical one (pm_card_chargeDeclined, not the visa_ alias).
  for (const [id, card] of Object.entries(TEST_PAYMENT_METHODS)) if (card.number === digits) return id;
  return null;
}
