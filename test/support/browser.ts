import type { Locator } from 'playwright-core';
import { expect } from 'vitest';

const normalize = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

/**
 * Retrying assertions on a page's elements (playwright-core has no `expect`): each polls with
 * vitest's expect.poll until it holds or `timeout` passes, as a user waits for the page.
 */
export function see(locator: Locator, timeout = 15_000) {
  const options = { timeout, interval: 100 };
  const text = () => locator.textContent({ timeout: 1_000 }).then(normalize, () => null);
  return {
    toHaveText: (expected: string | string[]) =>
      Array.isArray(expected)
        ? expect.poll(() => locator.allTextContents().then((all) => all.map(normalize)), options).toEqual(expected)
        : expect.poll(text, options).toBe(expected),
    toContainText: (expected: string) => expect.poll(text, options).toContain(expected),
    toHaveCount: (count: number) => expect.poll(() => locator.count(), options).toBe(count),
    toBeChecked: () => expect.poll(() => locator.isChecked(), options).toBe(true),
    toBeVisible: () => expect.poll(() => locator.isVisible(), options).toBe(true),
    toBeFocused: () =>
      expect
        .poll(
          () =>
            locator
              .evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement, undefined, { timeout: 1_000 })
              .catch(() => false),
          options,
        )
        .toBe(true),
  };
}
