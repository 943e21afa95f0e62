-- description: One row per P- or X-Chain UTXO of the configured addresses, as of its newest version (unspent or spent).
-- unique: utxo_id
-- not_null: chain, amount_navax, created_at, utxo_type
-- accepted_values: utxo_type = STAKE | TRANSFER | stake | transfer
-- column: chain: p-chain or x-chain, where the UTXO is listed
-- column: created_at: when the transaction that created it was accepted
-- column: consumed_at: when it was spent, null while unspent
-- column: is_spent: whether a transaction has consumed it
with source as (
    select * from {{ lake('utxos') }}
),

newest as (
    select *
    from source
    qualify row_number() over (partition by utxoId order by _extracted_at desc) = 1
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
