-- description: Tokens of the configured NFT collections with their metadata and owner, one row per token per snapshot.
-- unique: chain_id, token_address, token_id_exact, snapshot_at
-- incremental: true
-- not_null: network, erc_type, metadata_index_status
-- accepted_values: erc_type = ERC-721
-- column: chain_id: the EVM chain id
-- column: token_address: the collection contract (lowercase)
-- column: token_id: the token id (DECIMAL; null beyond 38 digits)
-- column: token_id_exact: the token id as an exact decimal string (uint256)
-- column: network: mainnet or fuji
-- column: collection_name: the collection's name
-- column: collection_symbol: the collection's symbol
-- column: erc_type: the token standard, as the API gives it (ERC-721)
-- column: token_uri: the token's metadata URI
-- column: owner_address: the token's owner at the snapshot (lowercase)
-- column: metadata_index_status: how indexing its metadata went (INDEXED, UNINDEXED, MISSING_TOKEN, INVALID_TOKEN_URI, …)
-- column: metadata_updated_at: when its metadata was last indexed
-- column: metadata_name: the token's name from its metadata
-- column: metadata_symbol: the token's symbol from its metadata
-- column: metadata_image_uri: its image
-- column: metadata_description: its description
-- column: metadata_animation_uri: its animation
-- column: metadata_external_url: its external URL
-- column: metadata_background: its background colour
-- column: metadata_attributes: its attributes as JSON text
-- column: snapshot_at: when avalake began the snapshot that observed it (a large collection is read over several flushes, or runs, under one time: until its last page is read, the snapshot holds part of the collection)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('nft_tokens') }}
),

newest as (
    select * from {{ newest('source', 'chain, address, tokenIdExact, _snapshot_at') }}
),

final as (
    select
        chain as chain_id,
        lower(address) as token_address,
        tokenId as token_id,
        tokenIdExact as token_id_exact,
        network,
        "name" as collection_name,
        symbol as collection_symbol,
        ercType as erc_type,
        tokenUri as token_uri,
        lower(ownerAddress) as owner_address,
        metadata.indexStatus as metadata_index_status,
        metadata.metadataLastUpdatedTimestamp as metadata_updated_at,
        metadata.name as metadata_name,
        metadata.symbol as metadata_symbol,
        metadata.imageUri as metadata_image_uri,
        metadata.description as metadata_description,
        metadata.animationUri as metadata_animation_uri,
        metadata.externalUrl as metadata_external_url,
        metadata.background as metadata_background,
        metadata.attributes as metadata_attributes,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
