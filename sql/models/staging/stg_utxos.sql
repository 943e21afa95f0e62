-- description: One row per P- or X-Chain UTXO of the configured addresses, as of its newest version (unspent or spent).
-- unique: utxo_id
-- incremental: true
-- not_null: chain, amount_navax, created_at, utxo_type
-- accepted_values: utxo_type = STAKE | TRANSFER | stake | transfer
-- column: utxo_id: the UTXO's id
-- column: network: mainnet or fuji
-- column: chain: p-chain or x-chain, where the UTXO is listed
-- column: addresses: the addresses that own it
-- column: amount_navax: the amount held, in the asset's smallest unit (nAVAX for AVAX)
-- column: asset_id: the asset held (AVAX's asset id for AVAX)
-- column: utxo_type: STAKE or TRANSFER (lowercase on the X-Chain), as the API gives it
-- column: creation_tx_hash: the transaction that created it
-- column: created_at: when the transaction that created it was accepted (UTC)
-- column: consuming_tx_hash: the transaction that spent it, null while unspent
-- column: consumed_at: when it was spent (UTC), null while unspent
-- column: is_spent: whether a transaction has consumed it
-- column: is_staked: whether it is locked as stake (null when the API does not say, as on the X-Chain)
-- column: reward_type: of a reward UTXO: VALIDATOR, DELEGATOR or VALIDATOR_FEE (null for other UTXOs)
-- column: stake_started_at: of a staked UTXO: start of its staking period (UTC; null otherwise)
-- column: stake_ended_at: of a staked UTXO: end of its staking period (UTC; null otherwise)
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('utxos') }}
),

newest as (
    select * from {{ newest('source', 'utxoId') }}
),

final as (
    select
        utxoId as utxo_id,
        network,
        chain,
        addresses,
        coalesce(amount, asset.amount) as amount_navax,
        coalesce(assetId, asset.assetId) as asset_id,
        utxoType as utxo_type,
        coalesce(txHash, creationTxHash) as creation_tx_hash,
        coalesce(blockTimestamp, "timestamp") as created_at,
        consumingTxHash as consuming_tx_hash,
        coalesce(consumingBlockTimestamp, consumingTxTimestamp) as consumed_at,
        consumingTxHash is not null as is_spent,
        staked as is_staked,
        rewardType as reward_type,
        utxoStartTimestamp as stake_started_at,
        utxoEndTimestamp as stake_ended_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
