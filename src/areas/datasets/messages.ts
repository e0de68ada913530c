import { Attributes, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const Dataset = message('Dataset', {
  id: t.string,
  name: t.string,
  description: t.string,
  attributes: t.msg(() => Attributes),
});

export const SearchDatasetsRequest = message('SearchDatasetsRequest', { pageSize: t.int32, pageToken: t.string });
export const SearchDatasetsResponse = searchResponse('SearchDatasetsResponse', 'datasets', Dataset);

export interface DatasetRecord {
  id: string;
  name: string;
  description?: string;
  attributes?: AttributesRecord;
}
