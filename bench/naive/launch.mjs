// The references' browser: Debian's chrome-headless-shell through puppeteer-core, with the
// same switches pagereel uses, one page of the given size loaded from `url`.
import puppeteer from 'puppeteer-core';

export async function openPage(url, width, height) {
  const browser = await puppeteer.launch({
    executablePath: process.env.PAGEREEL_BROWSER || '/usr/lib/chromium/chromium-headless-shell',
    headless: 'shell',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: Number(width), height: Number(height) });
  await page.goto(url, { waitUntil: 'load' });
  return { browser, page };
}
