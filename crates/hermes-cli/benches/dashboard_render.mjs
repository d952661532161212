// Chromium (playwright-core) opening the dashboard's sessions page: from
// navigation start until its first 50 rows are in the table, ten times.
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.HERMES_PLAYWRIGHT}/`);
const { chromium } = require('playwright-core');
const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.HERMES_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const page = await browser.newPage();
const samples = [];
for (let i = 0; i < 11; i++) {
  await page.goto('about:blank');
  const t = Date.now();
  await page.goto(`${url}#/sessions`);
  await page.locator('#sessions-table tbody tr').nth(49).waitFor();
  if (i > 0) samples.push(Date.now() - t);
}
samples.sort((a, b) => a - b);
console.log(`sessions page rendered in Chromium  median ${samples[5]} ms  max ${samples[samples.length - 1]} ms`);
await browser.close();
