// Each integration's branding: a logo and a connect button, full and square, normal and
// hover. ferry has no artwork of the platforms, so it draws its own: the platform's
// initials on a colour derived from its key, as SVG. Images hold no data, so they are
// served without a key (an <img> cannot send one).
import { createHash } from 'node:crypto';
import type { Integration } from '../../platforms/types.js';

export const BRANDING_IMAGES = ['logo-full', 'logo-square', 'button-default', 'button-hover'] as const;
export type BrandingImage = (typeof BRANDING_IMAGES)[number];

export function brandingImageUrl(baseUrl: string, key: string, image: BrandingImage): string {
  return `${baseUrl}/branding/${encodeURIComponent(key)}/${image}.svg`;
}

/** A stable source id for the integration's branding (one source per integration here). */
export function brandingSourceId(key: string): string {
  const h = createHash('sha256').update(`ferry/source/${key}`).digest('hex');
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function brandingRecord(integration: Integration, baseUrl: string): Record<string, unknown> {
  const image = (which: BrandingImage, alt: string) => ({ image: { src: brandingImageUrl(baseUrl, integration.key, which), alt: `${integration.name} ${alt}` } });
  return {
    logo: { full: image('logo-full', 'logo'), square: image('logo-square', 'square logo') },
    button: { default: image('button-default', 'connect button'), hover: image('button-hover', 'connect button, hovered') },
    sourceId: brandingSourceId(integration.key),
  };
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The image as SVG text. */
export function brandingSvg(integration: Integration, which: BrandingImage): string {
  const hue = parseInt(createHash('sha256').update(integration.key).digest('hex').slice(0, 4), 16) % 360;
  const initials = integration.name.split(/\s+/).map((w) => w[0]).join('').slice(0, 3).toUpperCase();
  const square = which === 'logo-square';
  const [width, height] = square ? [64, 64] : which === 'logo-full' ? [240, 64] : [240, 48];
  const fill = `hsl(${hue} 55% ${which === 'button-hover' ? 32 : 42}%)`;
  const label = square ? initials : which.startsWith('button') ? `Connect ${integration.name}` : integration.name;
  const size = square ? 26 : 18;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escape(label)}">`
    + `<rect width="${width}" height="${height}" rx="10" fill="${fill}"/>`
    + `<text x="50%" y="50%" dominant-baseline="central" text-anchor="middle" font-family="sans-serif" font-size="${size}" fill="#fff">${escape(label)}</text></svg>\n`;
}
