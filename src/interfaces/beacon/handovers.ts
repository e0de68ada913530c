/**
 * Handovers of a variant record (framework `Handover`): where the same variant is served by the other
 * interfaces of this server, from the same registration. An htsget ticket for the VCF records of its
 * region (`/htsget/variants/{variant set id}?referenceName=&start=&end=`, whose data URLs a client such
 * as bcftools follows) and its GA4GH 0.6.0a10 record (`/variants/{id}`, the line with all its calls).
 */
import { variantId, variantSetId } from '../../areas/variants/service.js';
import type { Handover } from './envelope.js';
import type { Hit } from './genomic-variants.js';

export const HTSGET_TICKET = { id: 'EDAM:3016', label: 'VCF' };
export const GA4GH_VARIANT = { id: 'CUSTOM:ga4gh-0.6.0a10-variant', label: 'GA4GH 0.6.0a10 variant' };

/** The handovers of a hit, with absolute URLs from `base` (the server's public URL, or the address it was reached at). */
export function handoversOf(base: string, hit: Hit, variantInternalId: string): Handover[] {
  const { set, allele, view, key } = hit;
  const region = `referenceName=${encodeURIComponent(view.line.chrom)}&start=${allele.start}&end=${allele.end}`;
  return [
    {
      handoverType: HTSGET_TICKET,
      url: `${base}/htsget/variants/${variantSetId(set.datasetName, set.name)}?${region}`,
      note: `htsget ticket for the VCF records of the region of variant ${variantInternalId}`,
    },
    {
      handoverType: GA4GH_VARIANT,
      url: `${base}/variants/${variantId(set.datasetName, set.name, key.referenceName, key.start, key.digest)}`,
      note: `the VCF line of variant ${variantInternalId} with every call, as a GA4GH 0.6.0a10 Variant`,
    },
  ];
}
